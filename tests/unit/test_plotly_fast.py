"""The Plotly theme computed on plain dicts equals the one computed through Plotly's property
objects, for every figure builder the pages use; the ready figure is what st.plotly_chart sends."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest
from plotly.subplots import make_subplots

from ui.charts.attention import head_grid_figure
from ui.charts.common import fonts, ready_figure, style_plotly, style_plotly_dict, wrap_title


def reference_style(fig: go.Figure, presenter: bool) -> dict:
    """The theme as it was written against Plotly's property objects (slow, obviously right)."""
    f = fonts(presenter)
    out = go.Figure(fig)
    pick = (lambda current, size: max(current or 0, size)) if presenter else (lambda current, size: current or size)
    layout = out.layout
    layout.font.size = pick(layout.font.size, f.axis_label)
    layout.title.font.size = pick(layout.title.font.size, f.title)
    title = layout.title.text
    if isinstance(title, str) and "<br>" not in title and "\n" in wrap_title(title):
        layout.title.text = wrap_title(title).replace("\n", "<br>")
        lines = layout.title.text.count("<br>") + 1
        room = int(24 + lines * 1.35 * layout.title.font.size)
        if layout.margin.t is not None and layout.margin.t < room:
            layout.margin.t = room
    if layout.title.yref == "container" and layout.title.yanchor == "top" and isinstance(layout.title.text, str):
        layout.title.pad.t = round(8 + layout.title.text.count("<br>") * 1.35 * layout.title.font.size, 1)
    layout.legend.font.size = pick(layout.legend.font.size, f.legend_label)
    layout.hoverlabel.font.size = pick(layout.hoverlabel.font.size, f.axis_label)
    for axis in [*out.select_xaxes(), *out.select_yaxes()]:
        axis.tickfont.size = pick(axis.tickfont.size, f.axis_label)
        axis.title.font.size = pick(axis.title.font.size, f.axis_title)
    for scene in out.select_scenes():
        for axis in (scene.xaxis, scene.yaxis, scene.zaxis):
            axis.tickfont.size = pick(axis.tickfont.size, f.axis_label)
            axis.title.font.size = pick(axis.title.font.size, f.axis_title)
    for annotation in layout.annotations:
        annotation.font.size = pick(annotation.font.size, f.title - 2)
    above = [a for a in layout.annotations  # subplot titles over the top row, in the top margin
             if a.yref == "paper" and a.yanchor == "bottom" and isinstance(a.y, (int, float)) and a.y >= 0.999]
    if above and isinstance(layout.title.text, str) and layout.title.text and layout.margin.t is not None:
        lines = layout.title.text.count("<br>") + 1
        room = int(24 + lines * 1.35 * layout.title.font.size + 1.35 * max(a.font.size for a in above))
        if layout.margin.t < room:
            layout.margin.t = room
    for key in [k for k in fig.to_dict()["layout"] if k.startswith("coloraxis")]:  # a shared colour scale
        colorbar = layout[key].colorbar
        colorbar.tickfont.size = pick(colorbar.tickfont.size, f.legend_label)
        colorbar.title.font.size = pick(colorbar.title.font.size, f.legend_title)
    for trace in out.data:
        if "textfont" in trace:
            trace.textfont.size = pick(trace.textfont.size, f.mark_text)
        colorbar = getattr(trace, "colorbar", None) if "colorbar" in trace else None
        if colorbar is not None:
            colorbar.tickfont.size = pick(colorbar.tickfont.size, f.legend_label)
            colorbar.title.font.size = pick(colorbar.title.font.size, f.legend_title)
    return out.to_dict()


def as_json(fig_dict: dict) -> dict:
    """A figure dict as the browser receives it (arrays, typed arrays and key order normalised)."""
    return json.loads(plotly.io.to_json(fig_dict, validate=False))


def figures() -> dict[str, go.Figure]:
    rng = np.random.default_rng(0)
    v = lambda *shape: rng.normal(size=shape)  # noqa: E731
    subplots = make_subplots(rows=2, cols=2, subplot_titles=["a", "b", "c", "d"])
    subplots.add_trace(go.Bar(x=[1, 2], y=[3, 4], text=["x", "y"]), row=2, col=2)
    subplots.update_layout(title="A title long enough to be wrapped into two or three lines on a phone", margin={"t": 40})
    tokens = ["The", " capital", " of", "<b>x</b>", "%{y}"]
    grid = head_grid_figure(rng.random((2, 2, 5, 5)), [f"{i}·{t}" for i, t in enumerate(tokens)],
                            ["L0 H0", "L0 H1", "L1 H0", "L1 H1"], title="All heads", x_title="key", y_title="query",
                            value_title="weight", layer_names=["layer 0", "layer 1"], highlight=(1, 0))
    scene = go.Figure(go.Scatter3d(x=v(30), y=v(30), z=v(30), mode="markers+text", text=[f"w{i}" for i in range(30)],
                                   textfont={"size": 14}),
                      layout={"title": {"text": "Map"}, "scene": {"xaxis": {"title": {"text": "PC1 (30%)"}},
                                                                   "yaxis": {"title": {"text": "PC2"}},
                                                                   "zaxis": {"title": {"text": "PC3"}}}})
    heat = lambda z, **layout: go.Figure(go.Heatmap(z=z, colorscale="RdBu_r", colorbar={"title": {"text": "v"}},  # noqa: E731
                                                    texttemplate="%{z:.2f}"), layout=layout)
    return {
        "empty": go.Figure(),
        "heat_small": heat(v(4, 6), title={"text": "PE"}, xaxis={"title": {"text": "dim"}}),
        "heat_labelled": heat(v(5, 8), title={"text": "Your prompt's 5 rows of the embedding matrix (128 numbers each)"},
                              yaxis={"title": {"text": "token"}, "tickvals": list(range(5)), "ticktext": tokens}),
        "heat_large": heat(v(40, 64), title={"text": "PE"}, height=600),
        "scene_3d": scene,
        "head_grid": grid,
        "subplots": subplots,
        "preset_sizes": go.Figure(go.Heatmap(z=[[1.0]], texttemplate="%{z}", textfont={"size": 30}),
                                  layout={"font": {"size": 9}, "xaxis": {"tickfont": {"size": 40}}}),
    }


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("name", list(figures()))
def test_dict_theme_equals_the_property_theme(name: str, presenter: bool) -> None:
    fig = figures()[name]
    before = as_json(fig.to_dict())
    fast = style_plotly_dict(fig.to_dict(), presenter=presenter)
    assert as_json(fast) == as_json(reference_style(fig, presenter))
    assert as_json(style_plotly(fig, presenter=presenter).to_dict()) == as_json(fast)
    assert as_json(fig.to_dict()) == before  # the input is never changed


def test_presenter_raises_sizes_and_keeps_larger_ones() -> None:
    fig = figures()["preset_sizes"]
    on = style_plotly_dict(fig.to_dict(), presenter=True)
    off = style_plotly_dict(fig.to_dict(), presenter=False)
    assert on["layout"]["font"]["size"] == fonts(True).axis_label > 9
    assert off["layout"]["font"]["size"] == 9  # set by the builder: kept outside presenter mode
    assert on["layout"]["xaxis"]["tickfont"]["size"] == off["layout"]["xaxis"]["tickfont"]["size"] == 40
    assert on["data"][0]["textfont"]["size"] == 30


def test_ready_figure_is_what_streamlit_sends_without_copying() -> None:
    import plotly.tools

    fig = figures()["head_grid"]
    fig.data[0].uid = "abc"  # Streamlit pops uids: the shared dict must not carry one
    ready = ready_figure(fig, presenter=False)
    assert isinstance(ready, go.Figure)
    sent = plotly.tools.return_figure_from_figure_or_data(ready, validate_figure=True)
    assert sent is ready.to_dict()  # no copy, no validation
    assert all("uid" not in trace for trace in sent["data"])
    expected = reference_style(fig, False)
    for trace in expected["data"]:
        trace.pop("uid", None)
    assert json.loads(plotly.io.to_json(sent, validate=False)) == as_json(expected)


@pytest.mark.parametrize("query", [0, 3, 6])
def test_head_view_spec_from_its_cached_layout_equals_the_built_chart(query: int) -> None:
    """The head view's layout is built once per (length, query, heads, titles); with the prompt's
    table it is exactly the spec of the chart built from scratch."""
    import pandas as pd

    from ui.charts.attention import head_view_chart, head_view_chart_spec, spec_of

    rng = np.random.default_rng(query)
    weights = rng.random((4, 7))
    tokens = ["The", " cat", " sat", " on", "<b>", "%{y}", " mat"]
    kwargs = dict(title=f"Layer 1 · query {tokens[query]}", weight_title="weight", query_side="query",
                  key_side="key", head_title="head")
    names = [f"H{h}" for h in range(4)]
    full = spec_of(head_view_chart(weights, tokens, query, names, **kwargs))
    fast = head_view_chart_spec(weights, tokens, query, names, **kwargs)
    assert {k: v for k, v in fast.items() if k != "datasets"} == {k: v for k, v in full.items() if k != "datasets"}
    assert list(fast["datasets"]) == list(full["datasets"])
    for name in full["datasets"]:
        pd.testing.assert_frame_equal(fast["datasets"][name], full["datasets"][name])
    other = head_view_chart_spec(weights[::-1], tokens, query, names, **kwargs)  # other weights: same layout
    assert {k: v for k, v in other.items() if k != "datasets"} == {k: v for k, v in fast.items() if k != "datasets"}
    assert not other["datasets"][name].equals(fast["datasets"][name])


@pytest.mark.parametrize("n", [1, 5, 12])
def test_attention_heatmap_spec_from_its_cached_layout_equals_the_built_chart(n: int) -> None:
    import pandas as pd

    from ui.charts.attention import attention_heatmap, attention_heatmap_spec, spec_of

    rng = np.random.default_rng(n)
    weights = np.tril(rng.random((n, n)))
    labels = [f"{i}·t{i}" for i in range(n)]
    kwargs = dict(x_title="key", y_title="query", value_title="weight", masked_text="masked")
    for layer in range(2):  # two titles: one layout
        title = f"Layer {layer}, head 1: weights"
        full = spec_of(attention_heatmap(weights * (layer + 1) / 2, labels, title=title, **kwargs))
        fast = attention_heatmap_spec(weights * (layer + 1) / 2, labels, title=title, **kwargs)
        assert {k: v for k, v in fast.items() if k != "datasets"} == {k: v for k, v in full.items() if k != "datasets"}
        assert list(fast["datasets"]) == list(full["datasets"])
        for name in full["datasets"]:
            pd.testing.assert_frame_equal(fast["datasets"][name], full["datasets"][name])
    scores = np.where(np.tril(np.ones((n, n))) > 0, rng.normal(size=(n, n)), -np.inf)  # scores: built in full
    full = spec_of(attention_heatmap(scores, labels, title="s", scores=True, **kwargs))
    fast = attention_heatmap_spec(scores, labels, title="s", scores=True, **kwargs)
    assert {k: v for k, v in fast.items() if k != "datasets"} == {k: v for k, v in full.items() if k != "datasets"}


def test_the_written_template_follows_plotlys_default_template() -> None:
    """Importing Streamlit switches Plotly's default template; figures written as dicts then carry
    the same template as Plotly's own ``to_dict`` (a template remembered from before did not)."""
    from ui.charts.common import figure_dict

    raw = {"data": [{"type": "scatter", "x": [0.0, 1.0], "y": [1.0, 0.0]}], "layout": {"title": {"text": "t"}}}
    before = plotly.io.templates.default
    try:
        for name in ("plotly", "plotly_white", "plotly"):
            plotly.io.templates.default = name
            assert as_json(figure_dict(raw)) == as_json(go.Figure(raw).to_dict())
    finally:
        plotly.io.templates.default = before
