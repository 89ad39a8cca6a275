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
