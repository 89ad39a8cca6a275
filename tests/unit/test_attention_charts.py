"""The attention pages' charts written as Vega-Lite dicts (the head view's and the weights heat
map's cached layouts, the head picker) are the specs Altair wrote for them, and valid Vega-Lite."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.attention as charts
from ui.charts.attention import HEAD_PICK, attention_heatmap, head_picker, head_view_chart, spec_of


def _without_data(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k != "datasets"}


def _valid(spec: dict) -> None:
    validate_jsonschema(json.loads(json.dumps(_without_data(spec), default=str)), load_schema())


@pytest.mark.parametrize(("n", "n_head"), [(1, 1), (7, 4), (12, 6), (40, 2)])
def test_the_head_view_layout_is_the_altair_spec(n: int, n_head: int) -> None:
    names = tuple(f"头 {h}" for h in range(n_head))  # translated head names
    titles = dict(weight_title="weight", query_side="query 'q'", key_side="key", head_title="head")
    built = spec_of(head_view_chart(np.zeros((n_head, n)), ["·"] * n, 0, names, title="", **titles))
    layout = charts._head_view_layout.__wrapped__(n, names, *titles.values())
    assert layout == _without_data(built)
    _valid(layout)


@pytest.mark.parametrize(("n", "cell"), [(1, None), (24, None), (25, None), (33, None), (100, None), (5, 20)])
def test_the_weights_heat_map_layout_is_the_altair_spec(n: int, cell: int | None) -> None:
    labels = tuple(f"{i}·<t{i}>" for i in range(n))
    built = spec_of(attention_heatmap(np.zeros((n, n)), list(labels), title="", x_title="key", y_title="query",
                                      value_title="weight", masked_text="masked", cell=cell))
    layout = charts._attention_layout.__wrapped__(labels, "key", "query", "weight", "masked", ".4f", cell)
    assert layout == _without_data(built)
    _valid(layout)


MATRIX_CASES = [
    (np.array([[1.0, -np.inf], [0.5, 2.0]]), dict(cell=36, cell_width=90)),  # masked score, a diverging scale
    (np.array([[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]), dict(diverging=False, domain=(0.0, 1.0), value_format=".3f", cell=48)),
    (np.array([[3.0, 1.0]]), dict(diverging=False)),  # a sequential scale from the values
    (np.zeros((2, 2)), {}),  # all zero: the scale still has a range
    (np.array([[np.nan, np.inf], [-1e-7, 12345.678]]), dict(value_format="+.2f")),
]


@pytest.mark.parametrize(("matrix", "options"), MATRIX_CASES)
def test_the_numbered_matrix_is_the_altair_spec(matrix: np.ndarray, options: dict) -> None:
    rows = [f"r<{i}>" for i in range(matrix.shape[0])]
    cols = [f"我 {j}" for j in range(matrix.shape[1])]
    titles = dict(title="Q · 头 1", x_title="dimension", y_title="token", value_title="value")
    built = spec_of(charts.value_matrix(matrix, rows, cols, **titles, **options))
    written = charts.value_matrix_spec(matrix, rows, cols, **titles, **options)
    assert _without_data(written) == _without_data(built)
    assert list(written["datasets"]) == list(built["datasets"])
    for name, frame in built["datasets"].items():
        pd.testing.assert_frame_equal(written["datasets"][name], frame)
    _valid(written)
    with pytest.raises(ValueError):
        charts.value_matrix_spec(matrix, rows[:-1], cols, **titles)


def altair_head_picker(layers: Sequence[int], heads: Sequence[int], labels: Sequence[str], scores: Sequence[float], *,
                       title: str, x_title: str, y_title: str, label_title: str, score_title: str,
                       selected: tuple[int, int] | None = None) -> alt.Chart:
    """The Altair builder ``head_picker`` replaced (as it was), for the comparison."""
    frame = pd.DataFrame({
        "layer": list(map(int, layers)), "head": list(map(int, heads)), "label": list(labels),
        "score": [float(s) for s in scores],
    })
    frame["shown"] = [f"{s:.2f}" if np.isfinite(s) else "—" for s in frame["score"]]
    frame["current"] = [selected == (lay, h) for lay, h in zip(frame["layer"], frame["head"])]
    pick = alt.selection_point(name=HEAD_PICK, fields=["layer", "head"], on="click", clear=False)
    x = alt.X("head:O", title=x_title, axis=alt.Axis(labelAngle=0, orient="top"))
    y = alt.Y("layer:O", title=y_title)
    tooltip = [alt.Tooltip("layer:O", title=y_title), alt.Tooltip("head:O", title=x_title),
               alt.Tooltip("label:N", title=label_title), alt.Tooltip("shown:N", title=score_title)]
    base = alt.Chart(frame)
    cells = base.mark_rect(cornerRadius=4, stroke="#e4572e", cursor="pointer").encode(
        x=x, y=y,
        color=alt.Color("label:N", title=label_title, scale=alt.Scale(scheme="pastel1"),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=320,
                                          symbolStrokeWidth=0, symbolType="square", symbolOpacity=1)),
        strokeWidth=alt.condition("datum.current", alt.value(3), alt.value(0)),
        tooltip=tooltip,
    ).add_params(pick)
    text = base.mark_text(fontSize=12, color="#1b1b1b").encode(x=x, y=y, text="shown:N", tooltip=tooltip)
    return alt.layer(cells, text).properties(title=title, height=alt.Step(34), width="container")


@pytest.mark.parametrize("selected", [None, (1, 0)])
def test_the_head_picker_is_the_altair_spec(selected: tuple[int, int] | None) -> None:
    args = ([0, 0, 1, 1], [0, 1, 0, 1], ["broad", "self", "previous <b>", "broad"], [0.5, float("nan"), 0.25, 1.0])
    kwargs = dict(title="Pick a head", x_title="head", y_title="layer", label_title="label", score_title="score",
                  selected=selected)
    built = spec_of(altair_head_picker(*args, **kwargs))
    ours = head_picker(*args, **kwargs)
    view = built["params"][0]["views"][0]  # Altair names the view by a hash of the chart; ours is fixed
    assert json.loads(json.dumps(_without_data(built)).replace(view, charts.PICK_VIEW)) == _without_data(ours)
    assert list(ours["datasets"]) == list(built["datasets"])
    for name in built["datasets"]:
        pd.testing.assert_frame_equal(ours["datasets"][name], built["datasets"][name])
    _valid(ours)
    assert charts.picked_head({"selection": {HEAD_PICK: [{"layer": 1, "head": 0}]}}) == (1, 0)


def test_the_head_view_table_keeps_user_text_as_data() -> None:
    tokens = ["<b>", "%{y}", "'"]
    spec = charts.head_view_chart_spec(np.full((2, 3), 1 / 3), tokens, 2, ["H0", "H1"], title="t", weight_title="w",
                                       query_side="q", key_side="k", head_title="h")
    assert not re.search(r"<b>|%\{y\}", json.dumps(_without_data(spec)))
    (frame,) = spec["datasets"].values()
    assert set(frame.loc[frame["kind"] == "token", "token"]) == set(tokens)


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize(("scores", "highlight"), [(False, None), (True, None), (False, (1, 0))])
def test_the_grid_dict_is_the_figure_plotly_wrote(scores: bool, highlight: tuple[int, int] | None,
                                                  presenter: bool) -> None:
    import plotly.io

    from ui.charts.common import ready_figure

    rng = np.random.default_rng(1)
    values = np.tril(rng.random((2, 3, 5, 5)))
    if scores:
        values = np.where(np.tril(np.ones((5, 5))) > 0, rng.normal(size=values.shape), -np.inf)
    tokens = [f"{i}·{t}" for i, t in enumerate(["The", "<b>x</b>", "%{y}", "巴黎", " of"])]
    args = (values, tokens, [f"L{layer} H{h}" for layer in range(2) for h in range(3)])
    kwargs = dict(title="All heads of this prompt at once (layers × heads)", x_title="key", y_title="query",
                  value_title="weight", layer_names=["layer 0", "layer 1"], scores=scores, highlight=highlight)
    reference = charts.head_grid_figure(*args, **kwargs)  # go.Figure: Plotly's own writing
    spec = charts.head_grid_spec(*args, **kwargs)

    def sent(fig: object) -> dict:
        return json.loads(plotly.io.to_json(ready_figure(fig, presenter=presenter), validate=False))

    assert sent(spec) == sent(reference)
    assert "<b>" not in json.dumps(spec["data"][0]["x"])  # user text stays escaped
