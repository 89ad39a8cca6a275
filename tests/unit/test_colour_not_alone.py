"""Never colour alone (WCAG 1.4.1, issue #44 item 5): every chart builder that colours categories
also carries them on a second channel (a symbol, a dash, a direct label, a facet or the axis).

The checker (``tests/colour_channels.py``) is proven on hand-made specs that break the rule; the
builders are then run on small inputs. ``tests/app/test_colour_not_alone.py`` runs the same check
on every chart the pages draw for a sample prompt.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.colour_channels import colour_alone
from tests.unit.test_chart_schema import BUILDERS as SCHEMA_BUILDERS
from ui.charts import attention, block, common, output, training, vectors, vl
from ui.charts.palettes import SHAPES

SERIES = vl.field("series", "nominal", title="s")
X = vl.field("cat", "nominal", title="c")
Y = vl.field("value", "quantitative", title="v")


def test_the_checker_finds_colour_alone() -> None:
    bars = {"mark": "bar", "encoding": {"color": SERIES, "x": X, "xOffset": vl.field("series", "nominal"), "y": Y}}
    assert colour_alone(bars) == ["chart: 'series' by colour alone"]
    # a conditional colour, a layer, a concatenation: still found
    conditional = {"mark": "rect", "encoding": {"color": {"condition": {"test": "true", **SERIES}, "value": "#999"}}}
    assert colour_alone(conditional)
    assert colour_alone({"layer": [bars, {"mark": "text", "encoding": {"text": vl.field("shown", "nominal")}}]})
    assert colour_alone({"hconcat": [{"mark": "point", "encoding": {}}, bars]}) == ["chart.hconcat[1]: 'series' by colour alone"]
    # value text beside the bars does not name the series; symbols of another field do not either
    other = {"mark": "point", "encoding": {"shape": vl.field("cat", "nominal")}}
    assert colour_alone({"layer": [bars, other]})
    # a hidden axis on the colour's field is no label
    hidden = {"mark": "bar", "encoding": {"color": SERIES, "y": {**vl.field("series", "nominal"), "axis": None}}}
    assert colour_alone(hidden)


def test_the_checker_accepts_every_second_channel() -> None:
    base = {"color": SERIES, "x": X, "y": Y}
    assert colour_alone({"mark": "line", "encoding": {**base, "strokeDash": vl.dashes(["a"], "s")}}) == []
    assert colour_alone({"mark": "point", "encoding": {**base, "shape": vl.shapes("series", ["a"], "s")}}) == []
    assert colour_alone({"mark": "bar", "encoding": {**base, "row": vl.field("series", "nominal")}}) == []
    assert colour_alone({"mark": "bar", "encoding": {**base, "y": vl.field("series", "nominal")}}) == []  # the axis
    labelled = {"mark": "text", "encoding": {**base, "text": vl.field("series", "nominal")}}
    assert colour_alone({"layer": [{"mark": "bar", "encoding": base}, labelled]}) == []  # a direct label
    assert colour_alone({"facet": {"row": vl.field("series", "nominal")}, "spec": {"mark": "bar", "encoding": base}}) == []
    assert colour_alone({"layer": [{"mark": "bar", "encoding": base}, vl.bar_symbols(base, "series", ["a", "b"])]}) == []
    # a text field that writes the category with more (e.g. its score) counts only where it does
    cells = {"mark": "rect", "encoding": {"color": vl.field("label", "nominal"), "x": X}}
    words = {"mark": "text", "encoding": {"text": vl.field("cell_text", "nominal"), "x": X}}
    written = [{"label": "broad", "cell_text": "broad\n0.62"}, {"label": "self", "cell_text": "self\n0.90"}]
    assert colour_alone({"layer": [cells, words], "datasets": {"t": written}}) == []
    unwritten = [{"label": "prev", "cell_text": "0.5"}, {"label": "prev", "cell_text": "0.7"}]  # scores only
    assert colour_alone({"layer": [cells, words], "datasets": {"t": [*written, *unwritten]}})
    # or a mark of its own per category; two categories sharing a mark, or a category with two, do not count
    marked = [{"label": "mask", "cell_text": "−∞"}, {"label": "new", "cell_text": "●"}, {"label": "old", "cell_text": ""}]
    assert colour_alone({"layer": [cells, words], "datasets": {"t": marked}}) == []
    assert colour_alone({"layer": [cells, words], "datasets": {"t": [*marked, {"label": "new2", "cell_text": "●"}]}})
    assert colour_alone({"layer": [cells, words], "datasets": {"t": [*marked, {"label": "new", "cell_text": "x"}]}})


def test_bar_symbols_follow_the_bars_and_share_their_legend() -> None:
    legend = vl.legend(columns=2)
    bars = {"color": {**SERIES, "legend": legend, "scale": {"domain": ["a", "b"]}}, "x": X, "y": Y,
            "opacity": {"value": 0.5}, "tooltip": [vl.tooltip("series", "s")]}
    layer = vl.bar_symbols(bars, "series", ["a", "b"])
    enc = layer["encoding"]
    assert layer["mark"]["type"] == "point" and layer["mark"]["filled"] and layer["mark"]["stroke"]
    assert enc["x"] == X and enc["y"] == Y and enc["color"] == bars["color"] and "opacity" not in enc
    assert enc["shape"]["scale"] == {"domain": ["a", "b"], "range": list(SHAPES[:2])}
    # the same domain, title and orient as the colour: Vega-Lite draws one legend (thin symbol outlines)
    assert enc["shape"]["legend"] == {**legend, "symbolStrokeWidth": 1} and enc["shape"]["title"] == "s"
    hidden = vl.bar_symbols({**bars, "color": {**bars["color"], "legend": None}}, "series", ["a", "b"])
    assert hidden["encoding"]["shape"]["legend"] is None
    assert vl.bar_symbols(bars, "series", ["a"], at={"x": vl.field("middle", "quantitative")})["encoding"]["x"]["field"] == "middle"


MASK = dict(title="T", x_title="key", y_title="query", state_title="S", visible_name="vis", masked_name="mask",
            newest_name="new")
LOSS = training.LossText("T", "step", "loss", "series", "train", "held-out", "uniform", "now")
CATEGORICAL_BUILDERS = {
    "block bars with groups": lambda: block.bars(("a", "b", "c"), (0.5, -0.2, 0.1), title="T", value_title="v",
                                                 label_title="l", color_labels=("head", "mlp", "head"),
                                                 color_title="kind"),
    "block grouped bars": lambda: block.grouped_bars(("L0", "L1"), ("attn", "mlp"), np.array([[1.0, 2.0], [3.0, -1.0]]),
                                                     title="T", x_title="x", y_title="y", series_title="s"),
    "block stable grouped bars": lambda: block.stable(block.grouped_bars(
        ("L0", "L1"), ("attn", "mlp"), np.array([[1.0, 2.0], [3.0, -1.0]]), title="T", x_title="x", y_title="y",
        series_title="s")),
    "block stacked share": lambda: block.stacked_share(("embed", "blocks", "head"), (10, 80, 10), title="T",
                                                       x_title="n", color_title="part", bar_label="model"),
    "block lines": lambda: block.lines((0.0, 1.0), {"a": (1.0, 2.0), "b": (2.0, 1.0)}, title="T", x_title="x",
                                       y_title="y", series_title="s", marker_x=0.5),
    "top tokens": lambda: output.top_tokens_chart(["a", "b"], [0.6, 0.3], "rest", 0.1, title="T", x_title="p",
                                                  y_title="t", kind_title="k", kind_top="top", kind_tail="rest"),
    "before/after": lambda: output.before_after_chart(["a", "b"], [0.6, 0.4], [1.0, 0.0], ["kept", "cut"], title="T",
                                                      x_title="p", y_title="t", series_title="s", original_name="before",
                                                      after_name="after", status_title="st"),
    "sample histogram": lambda: output.sample_histogram_chart(["a", "b"], [0.7, 0.3], [0.6, 0.4], [7, 3], title="T",
                                                              x_title="t", y_title="share", series_title="s",
                                                              observed_name="drawn", expected_name="p", count_title="n"),
    "top 5": lambda: output.top5_chart(["a", "b"], [0.6, 0.3], "a", title="T", x_title="p", y_title="t",
                                       chosen_title="k", chosen_name="drawn", other_name="other"),
    "two series lines": lambda: output.two_series_line_chart([1, 2], {"a": [1, 2], "b": [2, 4]}, ["#0072B2", "#D55E00"],
                                                             title="T", x_title="x", y_title="y", series_title="s"),
    "causal mask": lambda: output.causal_mask_chart(["0·a", "1·b", "2·c"], 1, **MASK),
    "causal mask, small cells": lambda: output.causal_mask_chart([f"{i}·t" for i in range(30)], 30, **MASK),
    "kv variants": lambda: output.kv_variants_chart(["MHA", "GQA"], [2_000, 1_000], ["2 kB", "1 kB"], ["d", "d"],
                                                    title="T", x_title="GB", y_title="kind", detail_title="d"),
    "loss curves": lambda: training.loss_curves([1, 2], [3.0, 2.0], [(2, 2.1)], [0, 2], 2, 7.5, text=LOSS),
    "live loss": lambda: training.live_loss([(1, 7.5, 1024, 0.1, None), (2, 7.0, 2048, 0.2, 7.2)], 7.6, 60, text=LOSS),
    "next token bars": lambda: training.next_token_bars(["a", "b"], [0.7, 0.1], [True, False],
                                                        text=training.BarsText("T", "p", "t", "k", "target", "other")),
    "cross entropy": lambda: training.cross_entropy_curve(0.5, [(0.9, "0.9"), (0.01, "0.01")], title="T",
                                                          x_title="p", y_title="loss", point_title="p"),
    "distance vs cosine": lambda: vectors.distance_vs_cosine([("a–b", 0.9, 0.4), ("c–d", 0.1, 1.2)], [(0.0, 1.4)],
                                                             title="T", x_title="cos", y_title="d", pair_title="pair",
                                                             curve_label="unit"),
    **SCHEMA_BUILDERS,
}


@pytest.mark.parametrize("name", list(CATEGORICAL_BUILDERS))
def test_no_builder_tells_categories_by_colour_alone(name: str) -> None:
    spec = CATEGORICAL_BUILDERS[name]()
    assert colour_alone(spec, name) == []
    assert colour_alone(common.style_vega(spec, presenter=True), name) == []  # as drawn


def test_the_builders_list_covers_categorical_colour() -> None:
    # The list above is the one that matters only if it holds charts that colour categories.
    coloured = [name for name, build in CATEGORICAL_BUILDERS.items()
                if '"type": "nominal"' in repr(build()).replace("'", '"') and "'color'" in repr(build())]
    assert len(coloured) >= 15, coloured
