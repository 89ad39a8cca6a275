"""Multi-head attention page (AppTest): the heatmaps show the model's real trace values."""

from __future__ import annotations

import base64
import json
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

import core
from core.lessons import head_analysis as ha
from core.engine import names
from tests.app.conftest import assert_clean, chart_title, open_page, vega_charts_by_place, vega_spec
from ui.i18n import translate

PAGE = "multi_head_attention"
PROMPT = "The capital of France is"


@lru_cache(maxsize=2)
def model(name: str = "classic"):
    return core.load_builtin(name)


def trace_of(prompt: str, name: str = "classic") -> dict[str, np.ndarray]:
    loaded = model(name)
    _, trace = loaded.model.run_with_trace(loaded.tokenizer.encode(prompt))
    return trace


def charts(at: AppTest) -> dict[str, list[pd.DataFrame]]:
    out = {}
    for element in at.get("vega_lite_chart"):
        spec = vega_spec(element)
        out[chart_title(spec)] = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
    return out


def heatmap_frame(at: AppTest, layer: int, head: int, lang: str = "en", scores: bool = False) -> pd.DataFrame:
    kind = translate("multi_head_attention.kind.scores" if scores else "multi_head_attention.kind.weights", lang)
    title = translate("multi_head_attention.heatmap.title", lang, layer=layer, head=head, kind=kind)
    return charts(at)[title][0]


def grid_elements(at: AppTest) -> list:
    """The all-heads grid (a Vega-Lite chart whose axes name the panels: ``head_grid_spec``)."""
    return [e for e in at.get("vega_lite_chart") if "floor(datum.value" in e.proto.spec]


def grid_cells(at: AppTest) -> pd.DataFrame:
    (element,) = grid_elements(at)
    (cells,) = [d for d in element.proto.datasets if d.name == "cells"]
    return convert_arrow_bytes_to_pandas_df(cells.data.data)


@pytest.fixture
def server_pickers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page as it is for a prompt too long for the browser to hold every head: the server's
    layer and head boxes and its clickable picker."""
    from ui.components import mha_heads

    monkeypatch.setattr(mha_heads, "MAX_VALUES", 0)


def browser_heads(at: AppTest) -> dict:
    """The data the browser's head picker and heatmap got (``ui.components.mha_heads``)."""
    from ui.components.mha_heads import COMPONENT_NAME

    found = []

    def walk(node) -> None:  # noqa: ANN001
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name == COMPONENT_NAME:
            found.append(json.loads(proto.json))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    assert len(found) == 1, "the head picker component is missing"
    return found[0]


def triangles_of(b64: str, n_layer: int, n_head: int, n: int) -> np.ndarray:
    """Decode the component's float32 triangles back to [layer, head, q, k] (NaN above the diagonal)."""
    flat = np.frombuffer(base64.b64decode(b64), dtype="<f4").reshape(n_layer, n_head, -1)
    out = np.full((n_layer, n_head, n, n), np.nan)
    q, k = np.tril_indices(n)
    out[:, :, q, k] = flat
    return out


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang, prompt=PROMPT)
    assert_clean(at)
    assert translate("multi_head_attention.title", lang) in at.title[0].value
    assert at.selectbox(key="mha_coref") is not None
    # the scores and grid switches are the browser's (flags as 1 / 0): no server toggle, no server grid
    assert not [w for w in at.toggle if w.key in ("mha_scores", "mha_grid")]
    data = browser_heads(at)
    assert data["knobs"]["layer"] == {"name": "mha_layer", "value": 0, "default": 0}
    assert data["knobs"]["scores"] == {"name": "mha_scores", "value": 0, "default": 0}
    assert data["knobs"]["grid"] == {"name": "mha_grid", "value": 1, "default": 1}
    n = len(data["labels"])
    assert data["knobs"]["query"]["value"] == n - 1 == data["knobs"]["query"]["default"]  # the head view: the last token
    assert data["tokens"] == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert all("⟦" not in v for v in data["text"].values()), "a translation key is missing"
    assert data["text"]["query"] == translate("multi_head_attention.axis.query", lang)
    assert data["text"]["grid_chart"] == translate("multi_head_attention.grid.chart", lang).replace("⟦", "")
    assert not grid_elements(at), "the all-heads grid is drawn in the browser (tests/e2e)"
    assert not at.get("plotly_chart")  # no Plotly in the browser


def test_every_heads_cells_are_the_trace_values() -> None:
    """The browser gets every head's weights and scores exactly as the trace holds them (float32);
    tests/e2e/test_multi_head_attention.py checks it shows them."""
    at = open_page(PAGE, prompt=PROMPT)
    data = browser_heads(at)
    cfg = model().config
    trace = trace_of(PROMPT)
    n = len(data["labels"])
    assert data["labels"][:2] == ["0·The", "1·␣capital"]
    patterns = triangles_of(data["patterns"], cfg.n_layer, cfg.n_head, n)
    scores = triangles_of(data["scores"], cfg.n_layer, cfg.n_head, n)
    q, k = np.tril_indices(n)
    for layer in range(cfg.n_layer):
        expected = trace[names.act_name("pattern", layer=layer)]
        # float32 forwards differ by a few ulps with the thread count another test left: 1e-6
        np.testing.assert_allclose(patterns[layer][:, q, k], expected[:, q, k], rtol=1e-6, atol=1e-6)
        expected = trace[names.act_name("attn_scores", layer=layer)]
        np.testing.assert_allclose(scores[layer][:, q, k], expected[:, q, k], rtol=1e-6, atol=1e-6)
    behaviours = ha.label_heads(ha.stack_patterns(trace, cfg.n_layer))
    assert [b["scores"] for b in data["behaviours"]] == [[f"{b.scores[k]:.3f}" for k in ha.BEHAVIOURS]
                                                         for b in behaviours]


def test_a_new_prompt_starts_the_head_view_at_its_last_token() -> None:
    from ui import state

    at = open_page(PAGE, prompt=PROMPT)
    at.session_state[state.durable_key("mha_query")] = 1
    at.run()
    first = browser_heads(at)["knobs"]["query"]
    assert first["value"] == 1
    at.session_state["prompt"] = "The capital of Japan is a city"
    at.run()
    assert_clean(at)
    data = browser_heads(at)
    n = len(data["labels"])
    assert data["knobs"]["query"]["value"] == n - 1 and data["knobs"]["query"]["scope"] != first["scope"]


def test_a_linked_head_and_the_switches_reach_the_browser() -> None:
    from ui import state

    cfg = model().config
    at = open_page(PAGE, prompt=PROMPT)
    at.session_state[state.durable_key("mha_layer")] = cfg.n_layer - 1  # as a link sets it
    at.session_state[state.durable_key("mha_head")] = cfg.n_head - 1
    at.run()
    assert_clean(at)
    data = browser_heads(at)
    assert (data["knobs"]["layer"]["value"], data["knobs"]["head"]["value"]) == (cfg.n_layer - 1, cfg.n_head - 1)
    assert data["knobs"]["scores"]["value"] == 0 and data["knobs"]["grid"]["value"] == 1
    at.session_state[state.durable_key("mha_scores")] = True  # as a link sets them
    at.session_state[state.durable_key("mha_grid")] = False
    at.run()
    assert_clean(at)
    assert browser_heads(at)["knobs"]["scores"]["value"] == 1 and browser_heads(at)["knobs"]["grid"]["value"] == 0
    at.session_state[state.durable_key("mha_scores")] = "maybe"  # a tampered value: the default
    at.run()
    assert not at.exception
    assert browser_heads(at)["knobs"]["scores"]["value"] == 0
    at.session_state[state.durable_key("mha_head")] = 200  # a bigger model's head: the default
    at.run()
    assert not at.exception
    assert browser_heads(at)["knobs"]["head"]["value"] == 0
    at.session_state[state.durable_key("mha_head")] = "x"  # a tampered value: the default, with a note
    at.run()
    assert not at.exception
    assert browser_heads(at)["knobs"]["head"]["value"] == 0


@pytest.mark.usefixtures("server_pickers")
def test_layer_and_head_choice_and_scores_toggle() -> None:
    cfg = model().config
    layer, head = cfg.n_layer - 1, cfg.n_head - 1
    at = open_page(PAGE, prompt=PROMPT)
    at.selectbox(key="mha_layer").set_value(layer).run()
    at.selectbox(key="mha_head").set_value(head).run()
    assert_clean(at)
    trace = trace_of(PROMPT)
    frame = heatmap_frame(at, layer, head)
    expected = trace[names.act_name("pattern", layer=layer)][head]
    got = np.zeros_like(expected)
    got[frame["q"], frame["k"]] = frame["value"]
    np.testing.assert_allclose(got, expected, atol=1e-6)

    at.toggle(key="mha_scores").set_value(True).run()
    assert_clean(at)
    frame = heatmap_frame(at, layer, head, scores=True)
    scores = trace[names.act_name("attn_scores", layer=layer)][head]
    visible = frame[~frame["masked"]]
    np.testing.assert_allclose(visible["value"], scores[visible["q"], visible["k"]], atol=1e-5)
    assert (frame.loc[frame["masked"], "shown"] == "−∞").all()


@pytest.mark.usefixtures("server_pickers")
def test_grid_holds_every_head_with_its_label() -> None:
    """The server's grid (a prompt too long for the browser; the browser's grid: tests/e2e)."""
    at = open_page(PAGE, prompt=PROMPT)
    cfg = model().config
    cells = grid_cells(at)
    trace = trace_of(PROMPT)
    patterns = ha.stack_patterns(trace, cfg.n_layer)
    behaviours = ha.label_heads(patterns)
    n = patterns.shape[-1]
    assert len(cells) == cfg.n_layer * cfg.n_head * n * (n + 1) // 2  # the causal triangle is left empty
    assert sorted(set(cells["head"])) == sorted(f"L{b.layer} H{b.head}" for b in behaviours)
    for row in cells.itertuples():
        layer, head = (int(part[1:]) for part in row.head.split())
        q, k = int(row.query.split("·")[0]), int(row.key.split("·")[0])
        assert k <= q
        assert row.value == pytest.approx(patterns[layer, head, q, k], abs=1e-6)
    (element,) = grid_elements(at)
    axes = json.loads(element.proto.spec)["layer"][0]["encoding"]
    assert "Layer 0" in axes["y"]["axis"]["labelExpr"] and '"H3"' in axes["x"]["axis"]["labelExpr"]
    at.toggle(key="mha_grid").set_value(False).run()
    assert not grid_elements(at)


def test_the_browser_gets_every_heads_label() -> None:
    """The labels live in the browser's radio group and grid: each its head's label and top score."""
    at = open_page(PAGE, prompt=PROMPT)
    behaviours = ha.label_heads(ha.stack_patterns(trace_of(PROMPT), model().config.n_layer))
    picked = browser_heads(at)["behaviours"]
    assert [b["label"] for b in picked] == [
        translate(f"multi_head_attention.behaviour.{b.label}", "en") + ("" if np.isnan(b.score) else f" {b.score:.2f}")
        for b in behaviours]


@pytest.mark.usefixtures("server_pickers")
def test_the_server_picker_labels_every_head() -> None:
    at = open_page(PAGE, prompt=PROMPT)
    cfg = model().config
    behaviours = ha.label_heads(ha.stack_patterns(trace_of(PROMPT), cfg.n_layer))
    element = next(c for c in at.get("vega_lite_chart")
                   if "Click a head" in chart_title(json.loads(c.proto.spec)))
    picker = json.loads(element.proto.spec)
    rows = convert_arrow_bytes_to_pandas_df(element.proto.datasets[0].data.data).to_dict("records")
    assert [(r["layer"], r["head"]) for r in rows] == [(b.layer, b.head) for b in behaviours]
    for row, b in zip(rows, behaviours):
        assert row["label"] == translate(f"multi_head_attention.behaviour.{b.label}", "en")
        assert row["score"] == pytest.approx(max(b.scores.values()), rel=1e-5)  # float32 in the chart
    assert any(p.get("name") == "head_pick" and p.get("select", {}).get("type") == "point"
               for p in picker.get("params", []))


@pytest.mark.usefixtures("server_pickers")
def test_head_view_follows_the_chosen_query() -> None:
    at = open_page(PAGE, prompt=PROMPT)
    n = len(model().tokenizer.encode(PROMPT))
    at.selectbox(key="mha_query").set_value(2).run()
    assert_clean(at)
    title = next(t for t in charts(at) if t.startswith(translate("multi_head_attention.view.chart", "en",
                                                                   layer=0, token="")[:8]))
    table = charts(at)[title][0]
    lines = table[table["kind"] == "line"]
    assert set(lines["k"]) == {0, 1, 2}  # only keys the query can see
    pattern = trace_of(PROMPT)[names.act_name("pattern", layer=0)]
    for _, row in lines.iterrows():
        head = int(row["head"].split()[-1])
        assert row["weight"] == pytest.approx(float(pattern[head, 2, int(row["k"])]), abs=1e-6)
    assert len(lines) == 3 * model().config.n_head and n > 2


def test_coreference_pairs_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang, prompt=PROMPT)
    first = ha.COREF_PAIRS[0] if lang == "zh" else ha.COREF_PAIRS[1]
    assert at.selectbox(key="mha_coref").value == first.key  # the page's language first
    text = " ".join(m.value for m in at.markdown)
    assert first.to_fruit.prompt in text and first.to_container.prompt in text
    chart_title = translate("multi_head_attention.coref.chart", lang, token="")[:6]
    assert any(t.startswith(chart_title) for t in charts(at))
    other = ha.COREF_PAIRS[2]
    at.selectbox(key="mha_coref").set_value(other.key).run()
    assert_clean(at)
    assert other.to_fruit.prompt in " ".join(m.value for m in at.markdown)


def test_bad_prompts_get_a_message(lang: str) -> None:
    for bad in ("", "\x00\x01", "x" * 5000):
        at = open_page(PAGE, lang=lang, prompt=bad)
        assert not at.exception
        assert at.warning


@pytest.mark.usefixtures("server_pickers")
def test_one_token_prompt_and_a_long_prompt() -> None:
    """The server's grid, for prompts too long for the browser (here: forced by the fixture)."""
    at = open_page(PAGE, prompt="The")
    assert_clean(at)
    long_prompt = long_prompt_of(64)
    at = open_page(PAGE, prompt=long_prompt)
    assert_clean(at)
    (element,) = grid_elements(at)  # 64 tokens × 16 heads: one image, one pixel per cell
    spec = json.loads(element.proto.spec)
    image = spec["layer"][0]["data"]["values"][0]["url"]
    assert spec["layer"][0]["mark"]["type"] == "image" and image.startswith("data:image/png;base64,")
    n = len(model().tokenizer.encode(long_prompt))
    width = int.from_bytes(base64.b64decode(image.split(",", 1)[1])[16:20], "big")  # the PNG header's width
    cfg = model().config
    assert width == cfg.n_head * n + (cfg.n_head - 1) * max(1, round(0.15 * n))
    # no values on hover in a picture: the page says where to find them
    assert translate("multi_head_attention.grid.image", "en") in [c.value for c in at.caption]
    short = open_page(PAGE, prompt=PROMPT)
    assert translate("multi_head_attention.grid.hover", "en") in [c.value for c in short.caption]


def long_prompt_of(n_tokens: int) -> str:
    """A corpus-style prompt of at most n_tokens tokens (and close to it)."""
    tok = model().tokenizer
    sentence = "小明把苹果放进书包，因为它太甜了。它指的是苹果。Tom put the apple in the bag because it was too small. "
    text = ""
    while len(tok.encode(text + sentence)) <= n_tokens:
        text += sentence
    for ch in sentence:
        if len(tok.encode(text + ch)) > n_tokens:
            break
        text += ch
    return text


def test_the_modern_model_shows_its_own_heads() -> None:
    """RoPE model: the heatmap follows the sidebar's model choice and its own trace."""
    at = open_page(PAGE, prompt=PROMPT)
    at.selectbox(key="w_model").set_value("modern").run()
    assert_clean(at)
    data = browser_heads(at)
    n = len(data["labels"])
    got = np.nan_to_num(triangles_of(data["patterns"], data["n_layer"], data["n_head"], n)[0, 0])
    expected = trace_of(PROMPT, "modern")[names.act_name("pattern", layer=0)][0]
    np.testing.assert_allclose(got, expected, atol=1e-6)
    classic = trace_of(PROMPT, "classic")[names.act_name("pattern", layer=0)][0]
    assert not np.allclose(expected, classic, atol=1e-3)


@pytest.mark.usefixtures("server_pickers")
def test_clicking_a_head_in_the_grid_selects_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # AppTest cannot click a Vega chart: the selection state a click produces is given to the
    # page instead (the same dict Streamlit stores under the chart's key), then the page reruns.
    import streamlit as st

    at = open_page(PAGE, prompt=PROMPT)
    assert at.selectbox(key="mha_layer").value == 0 and at.selectbox(key="mha_head").value == 0
    real_get = st.session_state.__class__.get

    def fake_get(self, key, default=None):  # noqa: ANN001, ANN202
        if key == "mha_pick":
            return {"selection": {"head_pick": [{"layer": 1, "head": 2}]}}
        return real_get(self, key, default)

    monkeypatch.setattr(st.session_state.__class__, "get", fake_get)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="mha_layer").value == 1 and at.selectbox(key="mha_head").value == 2
    enlarged = translate("multi_head_attention.heatmap.title", "en", layer=1, head=2,
                         kind=translate("multi_head_attention.kind.weights", "en"))
    assert any(chart_title(vega_spec(c)) == enlarged for c in at.get("vega_lite_chart"))
    at.run()  # the same (kept) selection is not applied again: the boxes stay free to change
    at.selectbox(key="mha_head").set_value(3).run()
    assert at.selectbox(key="mha_head").value == 3


@pytest.mark.usefixtures("server_pickers")
def test_outline_follows_the_chosen_head_and_the_grid_stays_byte_identical() -> None:
    """[W2-F]: the picker and the grid are built once per prompt; only the outline (the picker's
    ``current`` column) moves with the chosen head. The grid has no frame to move, so its spec
    text stays the same and the browser does not replot its small heatmaps."""
    at = open_page(PAGE, prompt=PROMPT)
    if not at.toggle(key="mha_grid").value:
        at.toggle(key="mha_grid").set_value(True).run()

    def outlined() -> list[tuple[int, int]]:
        picker = next(c for c in at.get("vega_lite_chart") if c.proto.id and "mha_pick" in c.proto.id)
        frame = convert_arrow_bytes_to_pandas_df(picker.proto.datasets[0].data.data)
        return [(int(r.layer), int(r.head)) for r in frame.itertuples() if r.current]

    def grid_spec() -> str:
        (element,) = grid_elements(at)
        return element.proto.spec

    before = grid_spec()
    assert outlined() == [(0, 0)]
    at.selectbox(key="mha_layer").set_value(1).run()
    at.selectbox(key="mha_head").set_value(2).run()
    assert not at.exception
    assert outlined() == [(1, 2)]
    assert grid_spec() == before


@pytest.mark.usefixtures("server_pickers")
def test_another_head_changes_the_heatmaps_data_not_its_spec() -> None:
    """Head select: the enlarged heatmap keeps its place and spec text (the browser swaps the
    cells and the title in); its title still names the chosen head."""
    at = open_page("multi_head_attention", lang="en")
    seen = {}
    for head in (0, 1, 3):
        at.selectbox(key="mha_head").set_value(head).run()
        assert_clean(at)
        seen[head] = vega_charts_by_place(at)
    places = list(seen[0])
    assert all(list(charts) == places for charts in seen.values())
    kind = translate("multi_head_attention.kind.weights", "en")
    titles = {head: translate("multi_head_attention.heatmap.title", "en", layer=0, head=head, kind=kind) for head in seen}
    enlarged = next(p for p in places if chart_title(vega_spec(seen[0][p])) == titles[0])
    assert len({charts[enlarged].proto.spec for charts in seen.values()}) == 1
    assert all(chart_title(vega_spec(charts[enlarged])) == titles[head] for head, charts in seen.items())


@pytest.mark.usefixtures("server_pickers")
def test_another_query_changes_the_head_views_data_not_its_spec() -> None:
    """The head view's query select: the same spec text, another title (it names the token)."""
    at = open_page("multi_head_attention", lang="en")
    seen = {}
    for query in (0, 2, 3):
        at.selectbox(key="mha_query").set_value(query).run()
        assert_clean(at)
        seen[query] = {chart_title(vega_spec(c)): c for c in at.get("vega_lite_chart")}
    prefix = translate("multi_head_attention.view.chart", "en", layer=0, token="<q>").split("<q>")[0]
    views = {query: next(c for title, c in charts.items() if title.startswith(prefix)) for query, charts in seen.items()}
    assert len({view.proto.spec for view in views.values()}) == 1
    assert len({chart_title(vega_spec(view)) for view in views.values()}) == len(views)
