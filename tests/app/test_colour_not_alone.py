"""Never colour alone, on every chart the pages draw for a sample prompt (``tests/colour_channels.py``).

The unit test runs the check on the builders; this one on what the pages really send, so a page
that builds a chart its own way, or a builder called with new options, is checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.conftest import chart_title, open_page, vega_spec
from tests.colour_channels import colour_alone
from ui import nav

PAGES = [None, *(Path(page.path).stem for _, pages in nav.SECTIONS for page in pages if page.path != "app.py")]


def _spec_with_data(element) -> dict:  # noqa: ANN001
    """The chart's spec with its datasets (a direct label may be a text field built from them)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    datasets = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets}
    return {**vega_spec(element), "datasets": datasets}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p or "overview")
def test_no_chart_on_the_page_tells_categories_by_colour_alone(page: str | None) -> None:
    at = open_page(page, "en", prompt="The capital of France is", timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    problems = [problem for element in at.get("vega_lite_chart")
                for problem in colour_alone(_spec_with_data(element), chart_title(vega_spec(element))[:60])]
    assert not problems, problems


def test_the_charts_after_generation_steps_do_not_tell_categories_by_colour_alone() -> None:
    """Generation draws its step charts (the causal mask, the timeline) only after Next."""
    from tests.app.test_generation import PAGE, _next

    at = open_page(PAGE, "en", timeout=120)
    _next(at, 2)
    titles = [chart_title(vega_spec(element)) for element in at.get("vega_lite_chart")]
    assert any(title.startswith("Causal mask") for title in titles), titles
    problems = [problem for element in at.get("vega_lite_chart")
                for problem in colour_alone(_spec_with_data(element), chart_title(vega_spec(element))[:60])]
    assert not problems, problems
