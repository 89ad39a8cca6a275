"""Charts for screen readers: each names what it shows for this prompt in one sentence (the
chart's ``description``, Vega's aria-label) and offers its numbers as a table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tests.unit.test_chart_schema import BUILDERS, _valid
from ui.chart_table import table_html
from ui.charts import access, attention, common, output, palettes
from ui.charts.access import HINT_KEY, ChartFacts, chart_facts, summary_sentence, without_hint


def test_bar_chart_summary_names_the_largest_bar_in_both_languages() -> None:
    spec = common.bar_chart(["cat", "dog", "的"], [0.2, 0.7, 0.1], title="Next token", x_title="p", y_title="token")
    facts = chart_facts(spec)
    assert facts.best == (("token", "dog"),) and facts.best_value == "0.700"
    assert summary_sentence(facts, "en") == "Next token. Highest p: token dog (0.700)."
    assert summary_sentence(facts, "zh") == "Next token。p最高：token dog（0.700）。"
    assert facts.headers == ("token", "p") and facts.rows == (("cat", "0.200"), ("dog", "0.700"), ("的", "0.100"))


def test_heatmap_summary_names_row_column_and_value() -> None:
    spec = common.heatmap(np.array([[0.1, 0.9], [0.3, 0.2]]), ["q1", "q2"], ["k1", "k2"], title="T", x_title="key",
                          y_title="query", value_title="weight")
    facts = chart_facts(spec)
    assert facts.best == (("query", "q1"), ("key", "k2")) and facts.best_value == "0.900"
    assert facts.total_rows == 4 and facts.headers == ("query", "key", "weight")


def test_attention_summary_is_where_the_last_token_looks_most() -> None:
    labels = ["苹果", "很", "甜", "它"]
    weights = np.tril(np.full((4, 4), 0.1))
    weights[3] = [0.62, 0.08, 0.1, 0.2]
    spec = attention.attention_heatmap(weights, labels, title="Head 3 of layer 0", x_title="key", y_title="query",
                                       value_title="weight", masked_text="masked")
    sentence = summary_sentence(chart_facts(spec), "en")
    assert sentence == "Head 3 of layer 0. Highest weight: query 它, key 苹果 (0.6200)."
    assert chart_facts(spec).total_rows == 16  # the table keeps every cell the chart draws


def test_summary_of_a_real_trace_names_the_argmax_of_the_last_query() -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    import core
    from core.engine import names

    loaded = core.load_builtin("classic")
    ids = loaded.tokenizer.encode("小明把苹果放进书包，因为它太甜了。它")
    _, trace = loaded.model.run_with_trace(ids)
    tokens = [f"{i}·{loaded.tokenizer.decode([t])}" for i, t in enumerate(ids)]  # unique labels
    pattern = np.asarray(trace[names.act_name("pattern", layer=0)])[1]  # head 1 of layer 0
    spec = attention.attention_heatmap(pattern, tokens, title="L0 H1", x_title="key", y_title="query",
                                       value_title="weight", masked_text="masked")
    facts = chart_facts(spec)
    key = int(np.argmax(pattern[-1]))
    assert facts.best == (("query", tokens[-1]), ("key", tokens[key]))
    assert facts.best_value == f"{pattern[-1, key]:.4f}"


def test_head_grid_reading_is_the_strongest_head_and_leaves_out_the_first_query() -> None:
    patterns = np.zeros((2, 2, 3, 3))
    patterns[..., 0, 0] = 1.0  # the first query can only see itself: not news
    patterns[:, :, 1:, :2] = 0.5
    patterns[1, 0, 2] = [0.1, 0.83, 0.07]
    spec = attention.head_grid_spec(patterns, ["a", "b", "c"], ["L0 H0", "L0 H1", "L1 H0", "L1 H1"], title="All heads",
                                    x_title="key", y_title="query", value_title="weight",
                                    layer_names=["Layer 0", "Layer 1"], head_names=["H0", "H1"], head_title="head")
    facts = chart_facts(spec)
    assert facts.best == (("head", "L1 H0"), ("query", "c"), ("key", "b")) and facts.best_value == "0.830"
    assert facts.total_rows == 4  # one row per head: its strongest pair
    assert HINT_KEY not in without_hint(spec).get("usermeta", {})
    assert without_hint(spec)["usermeta"]["embedOptions"] == {"renderer": "canvas"}  # the rest stays


def test_head_picker_writes_each_label_in_its_cell_in_okabe_ito() -> None:
    spec = attention.head_picker([0, 0, 1], [0, 1, 0], ["broad", "previous-token", "broad"], [0.4, 0.9, 0.5],
                                 title="Pick", x_title="head", y_title="layer", label_title="behaviour",
                                 score_title="score")
    rows = spec["datasets"][spec["data"]["name"]]
    assert list(rows["cell_text"]) == ["broad\n0.40", "previous-token\n0.90", "broad\n0.50"]
    cells, text = spec["layer"]
    assert cells["encoding"]["color"]["scale"] == {"domain": ["broad", "previous-token"],
                                                   "range": list(palettes.SERIES[:2])}
    assert text["encoding"]["text"]["field"] == "cell_text"
    facts = chart_facts(spec)
    assert facts.best == (("layer", "0"), ("head", "1"), ("behaviour", "previous-token")) and facts.best_value == "0.90"


def test_lines_are_told_apart_by_dash_too() -> None:
    spec = output.kv_growth_chart([10, 100], {"MHA": [1, 10], "GQA": [1, 5]}, {"MHA": ["1", "10"], "GQA": ["1", "5"]},
                                  title="T", x_title="tokens", y_title="GB", series_title="kind")
    dash = spec["encoding"]["strokeDash"]
    assert dash["field"] == "series" and len({tuple(d) for d in dash["scale"]["range"]}) == 2


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_builder_has_a_name_and_a_summary_and_stays_valid(name: str) -> None:
    spec = BUILDERS[name]()
    facts = chart_facts(spec)
    for lang in ("en", "zh"):
        sentence = summary_sentence(facts, lang)
        assert sentence and "⟦" not in sentence
        described = {**without_hint(spec), "description": sentence}
        _valid(described)
    if name == "token_chips":  # chips: things, not amounts; the summary lists them
        assert facts.items[:2] == ("low", "est") and len(facts.items) == 3
    else:
        assert facts.best_value, f"{name}: no value named in its summary"
    assert facts.headers and facts.rows and all(facts.headers), f"{name}: no table, or a column without a name"


def test_title_text_joins_lines_and_dicts() -> None:
    assert access.title_text({"text": ["Attention of", "layer 0"]}) == "Attention of layer 0"
    assert access.title_text("a\nb") == "a b"
    assert access.title_text({"text": {"expr": "x"}}) == ""


def test_table_html_escapes_every_cell_and_names_every_column() -> None:
    facts = ChartFacts("<b>chart</b>", headers=("token", ""), rows=(("<img src=x onerror=alert(1)>", "0.5"),),
                       total_rows=300)
    html = table_html(facts, "Sum <i>mary</i>", open_label="Numbers as a table", more_note="The first 1 of 300 rows.",
                      region_label="Numbers of <b>chart</b>")
    assert "<img" not in html and "<b>" not in html and "<i>" not in html
    root = ET.fromstring(html)
    assert [p.text for p in root.iter("p")][0] == "Sum <i>mary</i>"  # read, not shown
    headers = [th.text for th in root.iter("th")]
    assert headers == ["token", "—"] and all(th.get("scope") == "col" for th in root.iter("th"))
    assert [td.text for td in root.iter("td")] == ["<img src=x onerror=alert(1)>", "0.5"]
    assert root.find("details/summary").text == "Numbers as a table"
    region = root.find("details/div")
    assert region.get("role") == "region" and region.get("tabindex") == "0"
    assert "The first 1 of 300 rows." in html


def test_table_html_without_numbers_is_the_summary_alone() -> None:
    html = table_html(ChartFacts("T"), "T.", open_label="o", more_note="", region_label="r")
    assert "<details" not in html and "T." in html


def test_chart_summary_is_remembered_per_spec_object() -> None:
    spec = common.bar_chart(["a"], [1.0], title="p", x_title="p", y_title="t")
    first = common.chart_summary(spec, "en")
    assert first[1] == "p. Highest p: t a (1.000)."
    assert common.chart_summary(spec, "en")[0] is first[0]
    assert common.chart_summary(spec, "zh")[1] == "p。p最高：t a（1.000）。"


def test_space_summary_counts_groups_and_names_the_prompt() -> None:
    from ui.charts.space3d import SpaceLabels, arrows_space, embedding_space, joined_space, prompt_ring, space_facts, \
        space_summary
    from ui.charts.vectors import MapText

    labels = SpaceLabels(token="token", id="id", group="group", vector="vector", reset="r", zoom_in="+",
                         zoom_out="-", hint="h", legend="l")
    coords = np.arange(15, dtype=float).reshape(5, 3)
    text = MapText(title="Map", axis="PC{n} ({share})", token="token", token_id="id", category="group",
                   other="other", prompt="prompt")
    space = embedding_space(coords, list("abcde"), [None, "fruit", "fruit", None, "animal"],
                            {"fruit": "fruit", "animal": "animal"}, [0.5, 0.3, 0.1], text=text, show_other=True,
                            space_labels=labels)
    data = joined_space(space, prompt_ring(coords, [2, 4], ["c", "e"], name="prompt"))
    assert space_summary(data, "en") == ("Map: 7 points in 4 groups (other 2, fruit 2, animal 1, prompt 2). "
                                         "prompt: c, e.")
    facts = space_facts(data)
    assert facts.headers == ("token", "group", "PC1 (50.0%)", "PC2 (30.0%)", "PC3 (10.0%)")
    assert facts.rows[0][:2] == ("c", "prompt")  # the prompt's tokens first
    arrows = arrows_space({"king": [1, 0, 2]}, title="Arrows", axes=("x1", "x2", "x3"), space_labels=labels)
    assert space_summary(arrows, "en") == "Arrows: 1 arrows from the origin (king (1, 0, 2))."
    assert space_facts(arrows).rows == (("king", "1", "0", "2"),)


def test_token_chips_summary_lists_the_tokens_in_order() -> None:
    from ui.charts import tokens

    chips = [tokens.Chip("g", "un", "un", ("1",)), tokens.Chip("g", "believ", "believ", ("2",)),
             tokens.Chip("g", "able", "able", ("3",))]
    spec = tokens.token_chips(chips, title="Tokens", x_title="x", y_title="y", token_title="token",
                              detail_titles=("id",))
    facts = chart_facts(spec)
    assert summary_sentence(facts, "en") == "Tokens: 3 items: un, believ, able."
    assert facts.headers == ("token", "id") and facts.rows == (("un", "1"), ("believ", "2"), ("able", "3"))
    many = ChartFacts("T", items=tuple(str(i) for i in range(30)))
    assert summary_sentence(many, "zh").endswith("，另有 6 项。")
