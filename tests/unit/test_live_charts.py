"""Live charts (``ui.charts.live``): the spec text stays the same while a control moves, the
title and parameter values travel in the data, and nothing the student sees is lost."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ui.charts.attention import attention_heatmap
from ui.charts.common import style_vega
from ui.charts.live import PARAM_PREFIX, TITLE_FIELD, is_live, live_spec, resolve_live
from ui.charts.output import before_after_chart
from ui.charts.tokens import Chip, token_chips, token_count_curve


def spec_text(spec: dict) -> str:
    """What Streamlit's browser side compares to keep a chart's view: the spec without datasets."""
    return json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True, ensure_ascii=False)


def rows(data) -> list[dict]:
    if isinstance(data, pa.Table):
        return data.to_pylist()
    if isinstance(data, pd.DataFrame):
        return data.to_dict(orient="records")
    return list(data)


def knobs_chart(temperature: float, presenter: bool = False) -> dict:
    original = np.array([0.5, 0.3, 0.15, 0.05])
    tempered = original ** (1 / temperature)
    tempered /= tempered.sum()
    spec = before_after_chart(
        ["巴黎", "伦敦", "柏林", "苹果"], original, tempered, ["kept"] * 4,
        title=f"Probabilities after the knobs (T = {temperature:.2f}, top-k off, top-p = 1.00)",
        x_title="probability", y_title="token", series_title="series", original_name="original",
        after_name="after the knobs", status_title="status")
    return style_vega(spec, presenter=presenter)


@pytest.mark.parametrize("presenter", [False, True])
def test_the_knobs_chart_keeps_its_spec_text_while_its_data_and_title_change(presenter: bool) -> None:
    cold, hot = knobs_chart(0.5, presenter), knobs_chart(2.5, presenter)
    assert spec_text(cold) != spec_text(hot)  # plain: the title differs, so the browser rebuilt the chart
    live_cold, live_hot = live_spec(cold), live_spec(hot)
    assert spec_text(live_cold) == spec_text(live_hot)
    assert rows(live_cold["datasets"]["table"]) != rows(live_hot["datasets"]["table"])
    assert "T = 0.50" not in spec_text(live_cold) and "T = 2.50" not in spec_text(live_hot)
    assert rows(live_hot["datasets"]["table"])[0][TITLE_FIELD] == hot["title"]  # wrapped lines included
    assert resolve_live(live_cold) == cold and resolve_live(live_hot) == hot


def test_the_inputs_are_not_changed() -> None:
    spec = knobs_chart(1.5)
    before = json.dumps(spec, sort_keys=True, default=str)
    live_spec(spec)
    assert json.dumps(spec, sort_keys=True, default=str) == before


def chips_at(step: int) -> dict:
    pieces = [["l", "o", "w"], ["lo", "w"], ["low"]][min(step, 2)]
    chips = [Chip(group="low ×5", label=p, key=p, details=(str(i),), highlight=i == 0) for i, p in enumerate(pieces)]
    return token_chips(chips, title=f"Words after {step} merges", x_title="x", y_title="Word × how often",
                       token_title="token", detail_titles=("id",))


def curve_at(step: int) -> dict:
    return token_count_curve([0, 1, 2, 3], [15, 12, 10, 9], words=5, vocab_sizes=[6, 7, 8, 9], current=step,
                             title="Tokens in the corpus", x_title="merges", total_title="tokens",
                             per_word_title="tokens per word", vocab_title="vocabulary")


@pytest.mark.parametrize("as_arrow", [False, True])
def test_bpe_steps_change_only_the_data(as_arrow: bool) -> None:
    """The merge slider: chips (title and line width) and the curve (its ``current`` parameter)."""
    for build in (chips_at, curve_at):
        specs = []
        for step in (1, 2):
            spec = dict(build(step))
            if as_arrow:  # the page hands Arrow tables over (pages/tokenization.py show_chart)
                spec["datasets"] = {k: pa.Table.from_pylist(v) for k, v in spec["datasets"].items()}
            specs.append(style_vega(spec))
        live = [live_spec(s) for s in specs]
        assert spec_text(live[0]) == spec_text(live[1]), build.__name__
        for plain, moved in zip(specs, live):
            back = resolve_live(moved)
            assert spec_text(back) == spec_text(plain)
            assert rows(back["datasets"][next(iter(plain["datasets"]))]) == rows(next(iter(plain["datasets"].values())))


def test_the_curve_reads_its_current_step_from_the_data() -> None:
    live = live_spec(style_vega(curve_at(3)))
    params = {p["name"]: p for p in live["params"]}
    assert "value" not in params["current"] and "data(\"curve\")[0]" in params["current"]["expr"]
    assert rows(live["datasets"]["curve"])[0][PARAM_PREFIX + "current"] == 3
    assert all(PARAM_PREFIX + "current" not in row for row in rows(live["datasets"]["curve"])[1:])
    assert {p["name"]: p["value"] for p in resolve_live(live)["params"]}["current"] == 3


def test_another_head_keeps_the_heatmap_spec() -> None:
    rng = np.random.default_rng(0)
    labels = [f"{i}·t{i}" for i in range(6)]
    specs = []
    for head in (0, 1):
        weights = np.tril(rng.random((6, 6)))
        weights /= weights.sum(axis=1, keepdims=True)
        specs.append(style_vega(attention_heatmap(
            weights, labels, title=f"Layer 0, head {head}: attention weights", x_title="key", y_title="query",
            value_title="weight", masked_text="masked")))
    live = [live_spec(s) for s in specs]
    assert spec_text(specs[0]) != spec_text(specs[1])
    assert spec_text(live[0]) == spec_text(live[1])
    assert resolve_live(live[1])["title"] == specs[1]["title"]


def test_what_cannot_move_is_left_alone() -> None:
    no_rows = {"title": "t", "mark": "bar", "datasets": {"table": []}}
    assert live_spec(no_rows) is no_rows and not is_live(no_rows)
    selection = {"name": "pick", "select": {"type": "point"}}
    bound = {"name": "size", "value": 3, "bind": {"input": "range"}}
    spec = {"params": [selection, bound], "mark": "bar", "datasets": {"table": [{"x": 1}]}}
    assert live_spec(spec) is spec  # no title, no plain parameter: nothing to move
    spec["title"] = "moved"
    live = live_spec(spec)
    assert live["params"] == [selection, bound] and is_live(live)
    assert resolve_live(live) == spec


def test_a_title_in_lines_stays_in_lines() -> None:
    spec = {"title": {"text": ["first line", "second"], "anchor": "start"}, "mark": "bar",
            "datasets": {"table": pd.DataFrame({"x": [1, 2]})}}
    live = live_spec(spec)
    assert live["title"]["anchor"] == "start" and "split(" in live["title"]["text"]["expr"]
    back = resolve_live(live)
    assert back["title"] == spec["title"]
    assert back["datasets"]["table"].equals(spec["datasets"]["table"])


def test_the_smallest_dataset_carries_the_values_and_is_reused() -> None:
    """A long prompt's heatmap has n² cells and an n-row label table: the small one carries the
    title. A chart drawn again unchanged gets the same carrier object (its Arrow bytes cached)."""
    cells = pd.DataFrame({"q": range(100), "k": range(100)})
    names = pd.DataFrame({"pos": range(10), "label": [f"t{i}" for i in range(10)]})
    spec = {"title": "Layer 0, head 1", "mark": "rect", "datasets": {"tj-data-0": cells, "tj-data-1": names}}
    live = live_spec(spec)
    assert live["datasets"]["tj-data-0"] is cells and TITLE_FIELD not in cells.columns
    assert TITLE_FIELD in live["datasets"]["tj-data-1"].columns
    assert 'data("tj-data-1")' in live["title"]["text"]["expr"]
    assert live_spec(spec)["datasets"]["tj-data-1"] is live["datasets"]["tj-data-1"]
    other = live_spec({**spec, "title": "Layer 0, head 2"})
    assert other["datasets"]["tj-data-1"] is not live["datasets"]["tj-data-1"]
    assert spec_text(other) == spec_text(live)


def test_the_draws_histogram_orders_its_bars_by_data() -> None:
    """Other knobs, other tokens shown: the bar order is a data column, so the spec stays."""
    from ui.charts.output import sample_histogram_chart

    def histogram(labels: list[str]) -> dict:
        n = len(labels)
        return style_vega(sample_histogram_chart(
            labels, [1 / n] * n, [1 / n] * n, [10] * n, title="200 draws with seed 0", x_title="token",
            y_title="share", series_title="series", observed_name="drawn", expected_name="expected",
            count_title="count"))

    first, second = histogram(["␣Paris", "␣Lyon", "other"]), histogram(["␣Lyon", "␣Nice", "␣Paris", "other"])
    assert spec_text(live_spec(first)) == spec_text(live_spec(second))
    table = rows(second["datasets"]["table"])
    assert [r["token"] for r in sorted(table[:4], key=lambda r: r["order"])] == ["␣Lyon", "␣Nice", "␣Paris", "other"]
