"""Altair without its per-object checks (ui.charts.altair_fast) writes the same specs, for every
kind of channel our builders use: shorthands, conditions, values, tooltips, layers, concatenation."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ui.charts  # noqa: F401  (enables the fast path, as the app does)
from ui.charts import altair_fast
from ui.charts import attention, common, output
from ui.charts.spec import chart_spec

LABELS = [f"{i}·t{i}" for i in range(12)]
MATRIX = np.round(np.linspace(-1, 1, 48).reshape(4, 12), 3)


def builders() -> dict[str, object]:
    return {
        "top5": lambda: output.top5_chart(["a", "b", "c", "d", "e"], [0.5, 0.2, 0.1, 0.1, 0.05], "b", title="t",
                                          x_title="x", y_title="y", chosen_title="k", chosen_name="c", other_name="o"),
        "mask": lambda: output.causal_mask_chart(LABELS, 1, title="t", x_title="x", y_title="y", state_title="s",
                                                 visible_name="v", masked_name="m", newest_name="n"),
        "two_series": lambda: output.two_series_line_chart([1, 2, 3], {"a": [1.0, 2.0, 3.0], "b": [2.0, 3.0, 4.0]},
                                                           ["#111111", "#222222"], title="t", x_title="x", y_title="y",
                                                           series_title="s", log_scale=True),
        "timeline": lambda: output.timeline_chart([1, 2, 3], ["a", "b", "c"], [0.5, 0.4, 0.3], ["x", "y", "z"], title="t",
                                                  x_title="x", y_title="y", token_title="k", alternatives_title="al"),
        "heatmap": lambda: chart_spec(common.heatmap(np.abs(MATRIX) * 10, [f"L{i}" for i in range(4)], LABELS, title="t",
                                                     x_title="x", y_title="y", value_title="v", value_format=".0f",
                                                     show_values=True), validate=False),
        "heatmap_diverging": lambda: chart_spec(common.heatmap(np.where(MATRIX > 0.9, np.inf, MATRIX), [f"L{i}" for i in range(4)],
                                                               LABELS, title="t", x_title="x", y_title="y", value_title="v",
                                                               diverging=True, cell_size=20), validate=False),
        "value_matrix": lambda: chart_spec(attention.value_matrix(np.abs(MATRIX[:, :2]), [f"r{i}" for i in range(4)], ["c1", "c2"],
                                                                  title="t", x_title="x", y_title="y", value_title="v",
                                                                  value_format=".2f", diverging=False, domain=(0.0, 1.0),
                                                                  cell=30, cell_width=135), validate=False),
    }


@pytest.mark.parametrize("name", list(builders()))
def test_the_same_spec_with_and_without_altairs_checks(name: str) -> None:
    build = builders()[name]
    assert altair_fast.enabled()
    fast = json.dumps(build(), sort_keys=True, default=str)
    with altair_fast.altair_checks():
        assert not altair_fast.enabled()
        checked = json.dumps(build(), sort_keys=True, default=str)
    assert altair_fast.enabled()
    assert fast == checked
