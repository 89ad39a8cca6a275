"""The block pages' drawings: one pre-norm layer with live shapes, and Pre-LN vs Post-LN.

Laid out on the server as SVG (``ui.diagram.chain_svg``; sent through Markdown like the
Overview's diagram), so a new layer or prompt costs the browser no Graphviz layout. Pure
string building, tested without Streamlit; boxes of the layer drawing link to the page's own
section anchors.
"""

from __future__ import annotations

from ui.diagram import DIAGRAM_PX, PRESENTER_DIAGRAM_PX, ChainBox, chain_svg

DEFAULT_FONT_PX = DIAGRAM_PX
PRESENTER_FONT_PX = PRESENTER_DIAGRAM_PX  # presenter mode: larger letters that shrink little
LAYER_ORDER = ("x", "ln1", "attn", "add1", "ln2", "ffn", "add2", "y")


def _min_scale(font_size: int) -> float:
    return 0.95 if font_size >= PRESENTER_FONT_PX else 0.75


def layer_svg(labels: dict[str, str], shapes: dict[str, str], anchors: dict[str, str],
              font_size: int = DEFAULT_FONT_PX) -> str:
    """x -> norm -> attention -> (+) -> norm -> FFN -> (+) -> y, each box linked to ``#anchor``.

    ``labels`` and ``shapes`` are keyed by x, ln1, attn, add1, ln2, ffn, add2, y; ``labels["skip"]``
    names the two residual connections (x -> first sum, first sum -> second sum).
    """
    boxes = [ChainBox(labels[key], shapes[key], f"#{anchors[key]}" if key in anchors else None,
                      "sum" if key.startswith("add") else "box") for key in LAYER_ORDER]
    skips = [(0, 3, labels["skip"]), (3, 6, labels["skip"])]
    return chain_svg(boxes, skips, label=" → ".join(labels[k] for k in LAYER_ORDER), font_size=font_size,
                     min_scale=_min_scale(font_size))


def pre_post_svg(kind: str, labels: dict[str, str], font_size: int = DEFAULT_FONT_PX) -> str:
    """Pre-LN: x + F(LN(x)) (the norm inside the branch); Post-LN: LN(x + F(x)) (the norm on the main path)."""
    if kind not in ("pre", "post"):
        raise ValueError(f"kind must be 'pre' or 'post', got {kind!r}")
    x, y = ChainBox("x"), ChainBox("y")
    sublayer, norm, add = ChainBox(labels["sublayer"]), ChainBox(labels["norm"], kind="norm"), ChainBox("+", kind="sum")
    boxes = [x, norm, sublayer, add, y] if kind == "pre" else [x, sublayer, add, norm, y]
    skips = [(0, 3 if kind == "pre" else 2, labels["skip"])]
    return chain_svg(boxes, skips, label=" → ".join(b.title for b in boxes), font_size=font_size,
                     min_scale=_min_scale(font_size))
