"""Self-attention page (AppTest): the seeds' numbers with defaults, every widget changes the output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from core.lessons import attention_math as am
from tests.app.conftest import assert_clean, chart_title, open_page
from tests.app.lesson_components import lesson_components
from ui.i18n import translate

PAGE = "self_attention"


def charts(at: AppTest) -> dict[str, pd.DataFrame]:
    """Every Vega-Lite chart on the page: its title -> the data it was drawn from."""
    out = {}
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        data = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
        out[chart_title(spec)] = data[0] if data else pd.DataFrame()
    return out


def matrix_of(frame: pd.DataFrame, rows: list[str], cols: list[str]) -> np.ndarray:
    """Rebuild a matrix from a value_matrix chart's rows (−∞ cells come back as -inf)."""
    m = np.zeros((len(rows), len(cols)))
    for _, r in frame.iterrows():
        value = -np.inf if r["shown"] == "−∞" else float(r["value"])
        m[rows.index(r["row"]), cols.index(r["col"])] = value
    return m


def example(lang: str) -> list[str]:
    return list(am.SEED_TOKENS) if lang == "zh" else ["I", "love", "you"]  # the example follows the language


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    assert translate("self_attention.title", lang) in at.title[0].value
    assert len(at.tabs) == 4
    for key in ("sa_source", "sa_dk", "sa_x", "sa_wq", "sa_wk", "sa_wv"):
        assert any(getattr(w, "key", None) == key for w in _widgets(at)), key
    # ÷√dₖ, the mask, the query and the softmax lab are knobs of the browser components.
    views = lesson_components(at)
    assert views["sa_steps"]["knobs"] == {"sa_scale": False, "sa_mask": False, "sa_query": 0}
    assert views["sa_lab"]["knobs"]["sa_lab_case"] == "row0"
    for data in views.values():
        assert not [v for v in data["labels"].values() if "⟦" in v]


def _widgets(at: AppTest) -> list:
    return [*at.radio, *at.toggle, *at.selectbox, *at.text_input, *at.text_area, *at.slider]


def test_defaults_reproduce_the_seeds_row_of_wo(lang: str) -> None:
    """The server sends the seeds' Q, K, V and scores; the browser's steps 3-6 and the hand
    calculation on them (“Q₀ · K₀ = 1×0 + 0×1 + 2×1 = 2”, 0.155/0.422, [1.845, 6.223, 1.733]) are
    asserted in Chromium (tests/e2e/test_attention.py)."""
    at = open_page(PAGE, lang=lang)
    data = lesson_components(at)["sa_steps"]
    steps = am.attention_steps(am.SEED_X, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V, scale=False)
    assert data["tokens"] == example(lang)
    np.testing.assert_array_equal(data["scores"], [[2, 3, 3], [2, 4, 4], [1, 2, 3]])
    for name in ("q", "k", "v"):
        np.testing.assert_array_equal(data[name], getattr(steps, name))
    assert data["seeds_source"] is True
    scores = charts(at)[translate("self_attention.chart.scores", lang)]
    np.testing.assert_array_equal(matrix_of(scores, example(lang), example(lang)),
                                  [[2, 3, 3], [2, 4, 4], [1, 2, 3]])


def test_defaults_show_the_seeds_masked_rows_in_the_softmax_lab() -> None:
    at = open_page(PAGE)
    table = at.table[0].value
    softmax_col = translate("self_attention.lab.col.softmax", "en")
    rows = dict(zip(table[translate("self_attention.lab.col.scores", "en")], table[softmax_col]))
    assert rows["[2, 3, 3]"] == "[0.155, 0.422, 0.422]"
    assert rows["[2, −∞, −∞]"] == "[1, 0, 0]"
    assert rows["[2, 4, −∞]"] == "[0.119, 0.881, 0]"  # the seeds: [0.12, 0.88, 0]
    assert rows["[1, 2, 3]"] == "[0.090, 0.245, 0.665]"  # the seeds: [0.09, 0.24, 0.67]
    assert rows["[1, −2, 1]"] == "[0.488, 0.024, 0.488]"
    printed = dict(zip(table[translate("self_attention.lab.col.scores", "en")],
                       table[translate("self_attention.lab.col.seeds", "en")]))
    assert printed["[2, 4, −∞]"] == "[0.12, 0.88, 0]"
    plain = dict(zip(table[translate("self_attention.lab.col.scores", "en")],
                     table[translate("self_attention.lab.col.plain", "en")]))
    assert plain["[1, −2, 1]"] == translate("self_attention.lab.plain.short.division_by_zero", "en")


@pytest.mark.parametrize(("name", "value"), [("sa_mask", True), ("sa_scale", True), ("sa_query", 2)])
def test_a_durable_knob_reaches_the_browser(name: str, value: object) -> None:
    """The toggles' and the query's kept values (a link, a page change and back) are what the
    browser starts from; the numbers they give are checked in Chromium."""
    at = open_page(PAGE)
    at.session_state[f"kept.{name}"] = value
    at.run()
    assert_clean(at)
    assert lesson_components(at)["sa_steps"]["knobs"][name] == value


@pytest.mark.parametrize(("name", "bad"), [("sa_mask", "yes"), ("sa_scale", 2), ("sa_query", 99),
                                           ("sa_lab_case", "nope"), ("sa_lab_scores", "x" * 301)])
def test_bad_knob_values_fall_back(name: str, bad: object) -> None:
    at = open_page(PAGE)
    at.session_state[f"kept.{name}"] = bad
    at.run()
    assert not at.exception
    views = lesson_components(at)
    knobs = {**views["sa_steps"]["knobs"], **views["sa_lab"]["knobs"]}
    assert knobs[name] != bad
    assert at.toast, "the fallback is said in the page's language"


def test_as_written_source_shows_the_dependency_and_random_uses_the_seed() -> None:
    at = open_page(PAGE)
    at.radio(key="sa_source").set_value("seeds_as_written").run()
    assert_clean(at)
    assert at.text_area(key="sa_x").value.splitlines()[2] == "1 1 1 1"
    assert at.warning, "the page should say why the seeds' X cannot give their keys"
    at.radio(key="sa_source").set_value("random").run()
    first = at.text_area(key="sa_x").value
    at.number_input(key="w_seed").set_value(7).run()
    assert_clean(at)
    assert at.text_area(key="sa_x").value != first
    assert at.text_area(key="sa_x").value == am.format_matrix(am.random_example(7)[0])


def test_editing_x_changes_the_output_and_bad_input_is_explained(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    at.text_area(key="sa_x").set_value("1 0 1 0\n0 2 0 2\n1 1 1 1").run()
    assert_clean(at)
    data = lesson_components(at)["sa_steps"]
    assert data["scores"][2] != [1, 2, 3]  # the browser's steps 3-6 start from the new scores
    for bad in ("1 2\n3", "", "a b c", "1e300 0 0 0", "<script>alert(1)</script>"):
        at.text_area(key="sa_x").set_value(bad).run()
        assert not at.exception
        assert at.error, f"no message for {bad!r}"
    at.text_area(key="sa_x").set_value("1 0 1\n0 2 0").run()  # 3 columns but W has 4 rows
    assert not at.exception and at.error


def test_softmax_lab_cases_are_sent_translated(lang: str) -> None:
    """The lab's example picker and scores box answer in the browser (tests/e2e/test_attention.py
    checks the division by zero, −∞ and bad input there); the server sends the cases once."""
    at = open_page(PAGE, lang=lang)
    data = lesson_components(at)["sa_lab"]
    cases = {c["name"]: c for c in data["cases"]}
    assert cases["negative"]["scores"] == "1, −2, 1" and cases["masked1"]["scores"] == "2, 4, −∞"
    assert cases["row0"]["label"] == translate("self_attention.lab.case.row0", lang, a=example(lang)[0])
    assert data["knobs"]["sa_lab_scores"] == "2, 3, 3"


def test_dk_slider_changes_the_saturation() -> None:
    at = open_page(PAGE)
    at.slider(key="sa_dk").set_value(2).run()
    small = [m.value for m in at.metric]
    at.slider(key="sa_dk").set_value(512).run()
    assert_clean(at)
    big = [m.value for m in at.metric]
    assert small != big
    raw_max_small = float(small[1].split("→")[0])
    raw_max_big = float(big[1].split("→")[0])
    assert raw_max_big > 0.9 > raw_max_small  # saturated without ÷√dₖ


def test_multi_head_split_and_heads() -> None:
    """The head count and the toggles answer in the browser (tests/e2e/test_lesson_knobs.py checks
    every head's weights against core); the server sends X, W_O and the head counts once."""
    at = open_page(PAGE)
    data = lesson_components(at)["sa_mh"]
    np.testing.assert_array_equal(data["x"], am.SEED_MULTIHEAD_X)
    np.testing.assert_array_equal(data["w_o"], am.random_w_o(6, 0))
    assert data["counts"] == [1, 2, 3, 6]
    assert data["knobs"] == {"sa_mh_heads": 2, "sa_mh_scale": True, "sa_mh_mask": False}
    at.session_state["kept.sa_mh_heads"] = 3
    at.run()
    assert_clean(at)
    assert lesson_components(at)["sa_mh"]["knobs"]["sa_mh_heads"] == 3


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_prose_has_no_missing_keys(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    body = " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption), *(e.value for e in at.info)])
    assert "⟦" not in body


def test_toy_example_follows_the_language_and_the_typed_tokens() -> None:
    at = open_page(PAGE, lang="en")
    assert_clean(at)
    assert at.text_input(key="w_sa_tokens").value == "I love you" if any(
        w.key == "w_sa_tokens" for w in at.text_input) else True
    intro = next(m.value for m in at.markdown if "three-token example" in m.value)
    assert "**I love you**" in intro
    assert lesson_components(at)["sa_steps"]["tokens"] == ["I", "love", "you"]  # same numbers, English tokens
    # Switch to Chinese: the untouched example becomes 我 爱 你.
    at.session_state["lang"] = "zh"
    at.run()
    assert_clean(at)
    intro = next(m.value for m in at.markdown if "三个词元的例子" in m.value)
    assert "**我 爱 你**" in intro
    assert lesson_components(at)["sa_steps"]["words"] == {"a": "我", "b": "爱", "c": "你"}
    # Typed tokens: the intro and the notes follow them.
    tokens_box = next(w for w in at.text_input if "sa_tokens" in str(w.key))
    tokens_box.set_value("猫 吃 鱼").run()
    assert_clean(at)
    assert "**猫 吃 鱼**" in next(m.value for m in at.markdown if "三个词元的例子" in m.value)
    assert any("猫" in c.value and "吃" in c.value for c in at.caption)  # the source note names them
