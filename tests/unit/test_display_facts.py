"""[W2-D] display items that a unit test can pin: the dark theme's faded tokens and zero cells,
the Logits legend below the bars, and the vocabulary sizes the Tokenization page states."""

from __future__ import annotations

import json

import numpy as np

from ui.charts.attention import head_view_chart_spec
from ui.charts.common import SEQUENTIAL_BLUES, heatmap
from ui.charts.output import before_after_chart, top_tokens_chart
from ui.i18n import load_strings


def _walk(node: object, key: str) -> list[object]:
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                found.append(v)
            found.extend(_walk(v, key))
    elif isinstance(node, list):
        for item in node:
            found.extend(_walk(item, key))
    return found


def test_zero_cells_are_light_blue_not_white_on_the_dark_theme() -> None:
    """The sequential scale starts at 12 % of "blues" (a light blue), not at its white end."""
    assert SEQUENTIAL_BLUES["extent"][0] >= 0.1
    spec = heatmap(np.zeros((2, 2)), ["a", "b"], ["a", "b"], title="t", x_title="k", y_title="q",
                   value_title="w")
    schemes = [s for s in _walk(spec, "scheme") if isinstance(s, dict)]
    assert schemes and all(s["extent"][0] >= 0.1 for s in schemes)


def test_faded_tokens_in_the_head_view_stay_readable() -> None:
    """Tokens the query cannot see (and the other side's tokens) fade to 0.6, not 0.35."""
    weights = np.array([[0.5, 0.5, 0.0], [0.2, 0.8, 0.0]])  # [head, key] for query 1
    spec = head_view_chart_spec(weights, ["a", "b", "c"], 1, ["H0", "H1"], title="t", weight_title="w",
                                query_side="q", key_side="k", head_title="h")
    faded = [c["value"] for c in _walk(spec, "opacity") if isinstance(c, dict) and "condition" in c]
    assert faded and min(faded) >= 0.6


def test_logits_legends_sit_below_the_bars() -> None:
    """A legend beside the bars covered the values on a phone, and its title sat on a value."""
    top = top_tokens_chart(["a", "b"], [0.6, 0.3], "rest", 0.1, title="t", x_title="p", y_title="token",
                           kind_title="k", kind_top="top", kind_tail="tail")
    knobs = before_after_chart(["a", "b"], [0.6, 0.4], [1.0, 0.0], ["kept", "cut"], title="t", x_title="p",
                               y_title="token", series_title="s", original_name="before", after_name="after",
                               status_title="status")
    for spec in (top, knobs):
        legends = [lg for lg in _walk(spec, "legend") if isinstance(lg, dict)]
        assert legends and all(lg.get("orient") == "bottom" for lg in legends), json.dumps(legends)


def test_the_vocabulary_sizes_the_page_states() -> None:
    """GPT-3 has GPT-2's 50,257 tokens; only GPT-4's cl100k is about 100,000 (100,277)."""
    for lang in ("en", "zh"):
        body = load_strings(lang)["tokenization.why.body"]
        assert "GPT-3" in body and "50,257" in body and "100,277" in body
        gpt3_part = body[body.index("GPT-3"):body.index("GPT-4")]
        assert "50,257" in gpt3_part and "100" not in gpt3_part.replace("100,277", "")


def test_masked_cells_are_grey_in_scores_mode_too() -> None:
    """The caption says grey −∞ cells: in scores mode (−∞ above the diagonal) they were blank."""
    from ui.charts.attention import MASKED_GREY, attention_heatmap

    scores = np.array([[1.0, -np.inf], [0.5, 2.0]])
    spec = attention_heatmap(scores, ["a", "b"], title="t", x_title="k", y_title="q", value_title="score",
                             masked_text="masked", scores=True)
    colour = spec["encoding"]["color"]
    assert colour["condition"]["test"] == "datum.masked" and colour["condition"]["value"] == MASKED_GREY
    rows = next(iter(spec["datasets"].values())).to_dict(orient="records")
    assert [r["masked"] for r in rows] == [False, True, False, False]
