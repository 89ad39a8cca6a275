"""A chart's summary and numbers for everyone who cannot read the picture.

Under each chart: its one-sentence summary as text for screen readers only (the chart itself
carries it as its ``aria-label`` too, but some readers skip graphics), and a closed
"Numbers as a table" disclosure holding a real ``<table>`` (caption, column headers with
``scope``), opened on demand with a click, Enter or Space. One ``st.html`` element: plain HTML,
no data-grid script, no rerun to open it. Every cell is escaped (tokens are user text).

``ui.charts.common.vega`` calls it for every Vega-Lite chart; the 3-D map calls it too.

Example: show_chart_table(chart_facts(spec), "p(next). Highest p: token cat (0.700).")
"""

from __future__ import annotations

from html import escape

from ui.charts.access import TABLE_ROW_LIMIT, ChartFacts

# Visually hidden, still read (the usual "sr-only" recipe); inline so no page CSS is needed.
SR_ONLY = ("position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;"
           "clip:rect(0,0,0,0);white-space:nowrap;border:0")
_WRAP = "font-size:0.875rem;margin:0"
_SCROLL = "max-height:18rem;overflow:auto;margin-top:0.25rem"
_TABLE = "border-collapse:collapse;font-variant-numeric:tabular-nums"
# One rule for every cell (a style attribute per cell made a 200-row table 64 KiB).
_CELL_CSS = (".tj-chart-a11y th,.tj-chart-a11y td{padding:0.1rem 0.6rem;"
             "border-bottom:1px solid rgba(128,128,128,0.35);text-align:left}")


def table_html(facts: ChartFacts, summary: str, *, open_label: str, more_note: str, region_label: str) -> str:
    """The summary (screen readers only) and the table in a closed ``<details>``, as HTML.

    ``more_note`` is shown when the table holds the first ``TABLE_ROW_LIMIT`` rows only.

    Example: table_html(ChartFacts("p", headers=("token", "p"), rows=(("a", "0.7"),), total_rows=1),
             "p. Highest p: token a (0.7).", open_label="Numbers as a table", more_note="", region_label="p")
    """
    parts = [f'<div class="tj-chart-a11y" style="{_WRAP}">', f'<p style="{SR_ONLY}">{escape(summary)}</p>']
    if facts.headers and facts.rows:
        head = "".join(f'<th scope="col">{escape(h) or "—"}</th>' for h in facts.headers)
        body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in facts.rows)
        note = f"<p>{escape(more_note)}</p>" if facts.total_rows > len(facts.rows) and more_note else ""
        # The scrolling box can take focus (a keyboard can scroll it) and is named for that; the page
        # script (ui.page) marks it with the visible scroll cue when it is wider than the page.
        parts.append(
            f'<style>{_CELL_CSS}</style><details><summary style="cursor:pointer">{escape(open_label)}</summary>'
            f'<div class="tj-table-scroll" role="region" tabindex="0" aria-label="{escape(region_label)}" style="{_SCROLL}">'
            f'<table style="{_TABLE}"><caption style="{SR_ONLY}">{escape(facts.name)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}</div></details>")
    parts.append("</div>")
    return "".join(parts)


def show_chart_table(facts: ChartFacts, summary: str) -> None:
    """Draw the summary and the table under the chart just drawn (in the session's language)."""
    import streamlit as st

    from ui.i18n import t

    name = facts.name or t("charts.a11y.chart")
    st.html(table_html(facts, summary, open_label=t("charts.a11y.table_open"),
                       more_note=t("charts.a11y.table_more", shown=min(TABLE_ROW_LIMIT, facts.total_rows),
                                   total=facts.total_rows),
                       region_label=t("charts.a11y.table_region", name=name)))
