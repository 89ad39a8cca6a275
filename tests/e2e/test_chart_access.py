"""In real Chromium, what a screen reader gets: a chart's aria-label is its summary for this
prompt and its numbers open as a table; the Overview diagram's links are links; the journey's
heads are one radio group driven by the arrow keys."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.theme import THEMES

SUMMARY = re.compile(r"\. Highest .+: .+ \(.+\)\.$")


def test_a_chart_is_named_by_its_summary_and_opens_its_numbers_as_a_table(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/transformer_block")
    wait_for_app(page)
    assert_no_error(page)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"][aria-label]')]"
        ".some(e => / Highest /.test(e.getAttribute('aria-label')))", timeout=60_000)
    # Vega names the chart's own element (role graphics-document, around its SVG) by the description.
    charts = page.locator('[data-testid="stVegaLiteChart"][aria-label]')
    expect(charts.first).to_have_attribute("role", "graphics-document")
    assert charts.first.locator("svg").count() >= 1
    labels = charts.evaluate_all(
        "els => els.map(e => e.getAttribute('aria-label'))")
    summaries = [label for label in labels if SUMMARY.search(label)]
    assert summaries, labels
    # The same sentence is text under the chart (for readers that skip graphics), not shown.
    hidden = page.locator(".tj-chart-a11y > p").evaluate_all("els => els.map(e => e.textContent)")
    assert summaries[0] in hidden
    box = page.locator(".tj-chart-a11y", has=page.locator("p", has_text=summaries[0])).first
    expect(box.locator("p").first).to_have_css("position", "absolute")  # read, not shown
    table = box.locator("table")
    expect(table).to_be_hidden()
    box.locator("summary").click()
    expect(table).to_be_visible()
    assert table.locator("tbody tr").count() >= 1 and table.locator("th").count() >= 2
    expect(table.locator("td").first).to_have_css("border-bottom-style", "solid")  # the block's <style> applies


def test_overview_diagram_links_and_journey_heads(page: Page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    diagram = page.locator('[data-testid="stMain"] svg[role="group"]').first
    expect(diagram).to_be_attached(timeout=60_000)
    links = diagram.locator("a[aria-label]")
    assert links.count() >= 5
    # Named by exactly what it shows, read as a screen reader reads it: the box's one <text>, its
    # rows (tspans) joined by the space between them (axe: label-content-name-mismatch).
    named = links.evaluate_all("els => els.map(a => [a.getAttribute('aria-label'),"
                               " [...a.querySelectorAll('text')].map(t => t.textContent)])")
    assert all(words == [label] for label, words in named), named

    journey = page.locator(".tj[data-ready='1']")
    expect(journey).to_be_visible(timeout=60_000)
    heads = journey.locator("[role='radiogroup'] [role='radio']")
    n = heads.count()
    assert n >= 2
    assert heads.evaluate_all("els => els.map(e => e.tabIndex)").count(0) == 1  # one Tab stop
    heads.first.click()
    expect(heads.first).to_have_attribute("aria-checked", "true")
    page.keyboard.press("ArrowRight")
    expect(heads.nth(1)).to_have_attribute("aria-checked", "true")
    expect(heads.nth(1)).to_be_focused()
    assert heads.evaluate_all("els => els.map(e => e.tabIndex)") == [-1, 0] + [-1] * (n - 2)
    page.keyboard.press("End")
    expect(heads.nth(n - 1)).to_have_attribute("aria-checked", "true")
    page.keyboard.press("ArrowRight")  # wraps to the first head
    expect(heads.first).to_have_attribute("aria-checked", "true")
    # Each stage that opens a page is a button named by its title, inside a named group.
    stage = journey.locator(".tj-stage[data-stage='tokens']")
    expect(stage).to_have_attribute("role", "group")
    button = stage.locator("button.tj-open")
    assert button.get_attribute("aria-label").startswith(button.inner_text())


def test_the_3d_map_canvas_is_named_by_its_summary_and_has_a_table(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/embeddings")
    wait_for_app(page)
    canvases = page.locator('[data-testid="space3d"] canvas.s3-canvas')
    expect(canvases.first).to_be_attached(timeout=60_000)
    hidden = page.locator(".tj-chart-a11y > p").evaluate_all("els => els.map(e => e.textContent)")
    for i in range(canvases.count()):
        canvas = canvases.nth(i)
        expect(canvas).to_have_attribute("role", "img")
        label = canvas.get_attribute("aria-label")
        # The similarity lab's arrows with their tips, or the map's groups and their sizes.
        assert re.search(r": \d+ arrows from the origin \(| points in \d+ groups \(", label), label
        assert any(label.startswith(text) for text in hidden), (label, hidden)  # the same sentence, then the table


_CHART_TEXT = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks')].map((svg) => ({
  axis: [...svg.querySelectorAll('.role-axis-label text')].map((t) => [t.getAttribute('fill'), getComputedStyle(t).fill]),
  title: [...svg.querySelectorAll('.role-title-text text')].map((t) => [t.getAttribute('fill'), getComputedStyle(t).fill]),
  legends: [...svg.querySelectorAll('.role-legend-title text')].map((t) => t.textContent),
}))"""


def _rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_chart_text_is_drawn_in_the_themes_colours_and_each_legend_once(browser: Browser, app_url: str,
                                                                         scheme: str) -> None:
    """The spec's config carries the theme's text colours (what a canvas chart draws with: the
    page's CSS cannot reach it), for the theme the browser reported on the first run; the CSS
    paints an SVG chart's text the same. A category's colour and symbol share one legend."""
    colours = THEMES[scheme]
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/transformer_block")
        wait_for_app(page)
        assert_no_error(page)
        page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] svg.marks "
                               ".role-axis-label text').length > 20", timeout=60_000)
        charts = page.evaluate(_CHART_TEXT)
        axis = [pair for chart in charts for pair in chart["axis"]]
        titles = [pair for chart in charts for pair in chart["title"]]
        assert axis and titles
        assert {attr for attr, _ in axis} == {colours.muted_text}, {attr for attr, _ in axis}  # from the spec
        assert {css for _, css in axis} == {_rgb(colours.muted_text)}  # and the page's CSS
        assert {attr for attr, _ in titles} == {colours.text} and {css for _, css in titles} == {_rgb(colours.text)}
        for chart in charts:
            assert len(chart["legends"]) == len(set(chart["legends"])), chart["legends"]  # colour + symbol: one legend
        assert any(chart["legends"] for chart in charts)
    finally:
        context.close()
