"""AppTest helpers: start from app.py, set durable state, switch to a page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LANGS = ("en", "zh")


def open_page(page: str | None, lang: str = "en", prompt: str | None = None, timeout: float = 60) -> AppTest:
    """Run app.py once, set language (and prompt), then switch to ``pages/<page>.py``.

    Durable values are set through the session state the sidebar reads, exactly as a
    user's choice would be kept across page changes.
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["lang"] = lang
    if prompt is not None:
        at.session_state["prompt"] = prompt
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}.py")
        at.run()
    return at


def vega_spec(element: Any) -> dict:
    """A Vega-Lite element's spec as the student sees it. A chart drawn "live"
    (``ui.charts.live``: its title and parameters travel in its data, so its spec stays the
    same while a control moves) gets them written back from the datasets Streamlit sent."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    from ui.charts.live import is_live, resolve_live

    spec = json.loads(element.proto.spec)
    if not is_live(spec):
        return spec
    datasets = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets}
    plain = resolve_live({**spec, "datasets": datasets})
    return {k: v for k, v in plain.items() if k != "datasets"}


def vega_charts_by_place(at: AppTest) -> dict[tuple[int, ...], Any]:
    """Every Vega-Lite element of the main area by its place in the page (the child indices from
    the main block down). The browser keeps a chart's drawing only while the chart stays at the
    same place with the same spec text: a control must not move the charts below it."""
    found: dict[tuple[int, ...], Any] = {}

    def walk(node: Any, path: tuple[int, ...]) -> None:
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for index, child in children.items():
                walk(child, (*path, index))
        elif getattr(node, "type", None) == "vega_lite_chart":
            found[path] = node

    walk(at.main, ())
    return found


def chart_title(spec: dict) -> str:
    """A Vega-Lite chart's title as one line: the theme wraps long titles for phones
    (``ui.charts.common.wrap_title``), so the "\\n"s it adds are removed before comparing."""
    title = spec.get("title", "")
    title = title.get("text", "") if isinstance(title, dict) else title
    title = "".join(title) if isinstance(title, list) else str(title)
    return title.replace("\n", "")


def assert_clean(at: AppTest) -> None:
    """No exception block and no missing translation key on the page."""
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [m.value for m in at.caption] + [h.value for h in at.title]
    missing = [x for x in texts if "⟦" in str(x)]
    assert not missing, missing


@pytest.fixture(params=LANGS)
def lang(request: pytest.FixtureRequest) -> str:
    return request.param


def overview_svg(at: AppTest) -> str:
    """The Overview's pipeline diagram (an SVG sent through Markdown); fails if it is missing."""
    drawings = [m.value for m in at.markdown if m.value.startswith("<svg")]
    assert len(drawings) == 1, "the pipeline diagram is missing"
    return drawings[0]


def overview_svg_texts(at: AppTest) -> list[str]:
    """Every line the Overview diagram shows, as a browser draws it (character references decoded)."""
    import xml.etree.ElementTree as ET

    svg = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(overview_svg(at))
    # A box's rows are the <tspan>s of its one <text> (the spaces between them are for screen readers).
    return [row for el in root.iter(svg + "text")
            for row in ([s.text for s in el.findall(svg + "tspan") if s.text.strip()] if el.find(svg + "tspan") is not None
                        else ["".join(el.itertext())])]


def markdown_tables(at: AppTest) -> list[list[dict[str, str]]]:
    """Every Markdown table on the page (``ui.text.markdown_table``), as rows of header -> cell,
    each cell as shown: escapes undone, a row's bold/italic marks taken off."""
    import re

    def cell(text: str) -> str:
        text = text.strip()
        for mark in ("**", "*"):
            if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
                text = text[len(mark):-len(mark)]
                break
        return re.sub(r"\\(.)", r"\1", text)

    def cells(line: str) -> list[str]:
        return [cell(c) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

    tables = []
    for element in at.markdown:
        lines = str(element.value).splitlines()
        if len(lines) < 2 or not lines[0].startswith("| ") or not set(lines[1]) <= set("|- "):
            continue
        header = cells(lines[0])
        tables.append([dict(zip(header, cells(line))) for line in lines[2:]])
    return tables


def spaces(at: AppTest) -> dict[str, dict]:
    """Every 3-D space (``ui.components.space3d``) of the main area by its key: the data sent."""
    from ui.components.space3d import COMPONENT_NAME

    found: dict[str, dict] = {}

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name == COMPONENT_NAME:
            key = proto.id.rsplit("-", 1)[-1]  # a keyed element's id ends with its key
            found[key] = json.loads(proto.json)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found
