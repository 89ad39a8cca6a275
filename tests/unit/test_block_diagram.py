"""The block pages' drawings (SVG): every text escaped, links are page anchors, both LN variants differ."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ui.block_diagram import DEFAULT_FONT_PX, PRESENTER_FONT_PX, layer_svg, pre_post_svg
from ui.diagram import text_width

KEYS = ("x", "ln1", "attn", "add1", "ln2", "ffn", "add2", "y")
SVG = "{http://www.w3.org/2000/svg}"


def _rows(group: ET.Element) -> tuple[str, ...]:
    """A box's rows: its one ``<text>``, one ``<tspan>`` per row (the spaces between rows skipped)."""
    texts = group.findall(SVG + "text")
    assert len(texts) == 1, "a box's rows are one text (read as one phrase, like its link's name)"
    return tuple(span.text for span in texts[0].findall(SVG + "tspan") if span.text.strip())


def _boxes(svg: str) -> list[tuple[str, ...]]:
    """Each box's rows, top to bottom (a box is a rect with its text, maybe inside a link)."""
    root = ET.fromstring(svg)
    out = []
    for group in [*root.findall(SVG + "g"), *root.findall(SVG + "a")]:
        if group.find(SVG + "rect") is not None:
            out.append((float(group.find(SVG + "rect").get("y")), _rows(group)))
    return [texts for _, texts in sorted(out)]


def test_a_linked_box_reads_as_its_name() -> None:
    # A screen reader reads the box's text as one phrase; it must be the link's name word for
    # word (axe: label-content-name-mismatch), so the rows are joined by a real space.
    labels = {k: f"{k} title" for k in KEYS} | {"skip": "skip"}
    svg = layer_svg(labels, {k: "3 × 128" for k in KEYS}, {k: f"tb-{k}" for k in KEYS})
    links = list(ET.fromstring(svg).iter(SVG + "a"))
    assert len(links) == len(KEYS)
    for link in links:
        (text,) = link.findall(SVG + "text")
        assert "".join(text.itertext()) == link.get("aria-label"), link.get("aria-label")
    assert links[0].get("aria-label") == "x title 3 × 128"


def _skips(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [g.find(SVG + "title").text for g in root.iter(SVG + "g")
            if g.find(SVG + "path") is not None and g.find(SVG + "path").get("stroke-dasharray")]


def test_layer_svg_escapes_labels_and_links_anchors() -> None:
    labels = {k: f'{k} "q" \\ <b>*' for k in KEYS} | {"skip": "skip <i>"}
    shapes = {k: "3 × 128" for k in KEYS}
    svg = layer_svg(labels, shapes, {"attn": "tb-residual"})
    assert "<b>" not in svg and "<i>" not in svg and "*" not in svg  # no markup, no Markdown
    assert _boxes(svg) == [(labels[k], "3 × 128") for k in KEYS]  # top to bottom, shown as given
    links = [a.get("href") for a in ET.fromstring(svg).iter(SVG + "a")]
    assert links == ["#tb-residual"]
    assert _skips(svg) == ["skip <i>", "skip <i>"]  # the two residual connections
    arrows = sum(1 for _ in ET.fromstring(svg).iter(SVG + "path"))
    assert arrows == 7 + 2


def test_pre_and_post_ln() -> None:
    labels = {"sublayer": "F", "norm": "LN", "skip": "skip"}
    pre, post = pre_post_svg("pre", labels), pre_post_svg("post", labels)
    assert _boxes(pre) == [("x",), ("LN",), ("F",), ("+",), ("y",)]
    assert _boxes(post) == [("x",), ("F",), ("+",), ("LN",), ("y",)]
    assert _skips(pre) == _skips(post) == ["skip"]
    with pytest.raises(ValueError):
        pre_post_svg("middle", labels)


def test_presenter_font_size_reaches_every_box_and_label() -> None:
    labels = {k: k for k in KEYS} | {"skip": "skip"}
    shapes = {k: "3 × 128" for k in KEYS}
    for svg in (layer_svg(labels, shapes, {}, font_size=PRESENTER_FONT_PX),
                pre_post_svg("pre", {"sublayer": "F", "norm": "LN", "skip": "skip"}, font_size=PRESENTER_FONT_PX)):
        sizes = {t.get("font-size") for t in ET.fromstring(svg).iter(SVG + "text")}
        assert sizes == {str(PRESENTER_FONT_PX), str(PRESENTER_FONT_PX - 2)}  # boxes, and the skip labels
    assert f'font-size="{DEFAULT_FONT_PX}"' in layer_svg(labels, shapes, {}) and PRESENTER_FONT_PX > DEFAULT_FONT_PX


def test_boxes_are_wide_enough_for_their_text() -> None:
    labels = {k: "多头注意力 Multi-head attention" for k in KEYS} | {"skip": "残差"}
    svg = layer_svg(labels, {k: "4 个头 · 12×12" for k in KEYS}, {})
    root = ET.fromstring(svg)
    checked = 0
    for group in [*root.iter(SVG + "g"), *root.iter(SVG + "a")]:
        rect = group.find(SVG + "rect")
        for text in group.findall(SVG + "text") if rect is not None else ():
            for row in _rows(group):
                assert text_width(row, float(text.get("font-size"))) <= float(rect.get("width"))
                checked += 1
    assert checked >= len(KEYS), checked  # every box's label was measured, not none
