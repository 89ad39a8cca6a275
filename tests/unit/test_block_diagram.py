"""The block pages' DOT: every label is quoted, links are page anchors, both LN variants differ."""

from __future__ import annotations

import pytest

from ui.block_diagram import layer_dot, pre_post_dot

KEYS = ("x", "ln1", "attn", "add1", "ln2", "ffn", "add2", "y")


def test_layer_dot_quotes_labels_and_links_anchors() -> None:
    labels = {k: f'{k} "q" \\ <b>' for k in KEYS} | {"skip": "skip\nline"}
    shapes = {k: "3 × 128" for k in KEYS}
    dot = layer_dot(labels, shapes, {"attn": "tb-residual"})
    assert '\\"q\\"' in dot and "\\\\" in dot  # quotes and backslashes escaped
    assert "skip line" in dot  # newlines never break a DOT string
    assert 'URL="#tb-residual"' in dot
    assert dot.count("->") >= 9


def test_pre_and_post_ln() -> None:
    labels = {"sublayer": "F", "norm": "LN", "skip": "skip"}
    pre, post = pre_post_dot("pre", labels), pre_post_dot("post", labels)
    assert "x -> ln -> f -> add -> y" in pre and "x -> f -> add -> ln -> y" in post
    with pytest.raises(ValueError):
        pre_post_dot("middle", labels)


def test_presenter_font_size_reaches_every_box_and_edge_label() -> None:
    from ui.block_diagram import DEFAULT_FONT_PT, PRESENTER_FONT_PT

    labels = {k: k for k in KEYS} | {"skip": "skip"}
    shapes = {k: "3 × 128" for k in KEYS}
    for dot in (layer_dot(labels, shapes, {}, vertical=True, font_size=PRESENTER_FONT_PT),
                pre_post_dot("pre", {"sublayer": "F", "norm": "LN", "skip": "skip"}, font_size=PRESENTER_FONT_PT)):
        assert f"fontsize={PRESENTER_FONT_PT}]" in dot and f"fontsize={PRESENTER_FONT_PT - 2}]" in dot
    assert f"fontsize={DEFAULT_FONT_PT}]" in layer_dot(labels, shapes, {}) and PRESENTER_FONT_PT > DEFAULT_FONT_PT
