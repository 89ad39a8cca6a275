"""Graphviz DOT for the block pages: one pre-norm layer with live shapes, and Pre-LN vs Post-LN.

Pure string building (tested without Streamlit). Every label enters DOT through
``ui.diagram.dot_quote``; node links point at the page's own section anchors.
"""

from __future__ import annotations

from ui.diagram import dot_quote

DEFAULT_FONT_PT = 11
PRESENTER_FONT_PT = 15  # presenter mode (the page also gives the drawing more width)


def _head(font_size: int = DEFAULT_FONT_PT) -> list[str]:
    """Graph, node and edge defaults; ``font_size`` in points (edge labels 2 pt smaller)."""
    return [
        '  graph [rankdir=LR, bgcolor="transparent", nodesep=0.25, ranksep=0.3, pad=0.3, fontname="Noto Sans CJK SC, sans-serif"];',
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#5b7bb5", fontcolor="#1b1b1b", '
        f'fontname="Noto Sans CJK SC, sans-serif", fontsize={int(font_size)}];',
        '  edge [color="#7a8aa8", fontcolor="#7f8ca3", fontname="Noto Sans CJK SC, sans-serif", '
        f'fontsize={max(9, int(font_size) - 2)}];',
    ]


def _label(title: str, value: str) -> str:
    return dot_quote(title)[:-1] + "\\n" + dot_quote(value)[1:]


def layer_dot(labels: dict[str, str], shapes: dict[str, str], anchors: dict[str, str], vertical: bool = False,
              font_size: int = DEFAULT_FONT_PT) -> str:
    """x -> norm -> attention -> (+) -> norm -> FFN -> (+) -> y, each box linked to ``#anchor``.

    ``labels`` and ``shapes`` are keyed by x, ln1, attn, add1, ln2, ffn, add2, y.
    """
    order = ("x", "ln1", "attn", "add1", "ln2", "ffn", "add2", "y")
    lines = ["digraph layer {"] + [line.replace("rankdir=LR", "rankdir=TB") if vertical else line
                                   for line in _head(font_size)]
    for key in order:
        attrs = [f"label={_label(labels[key], shapes[key])}"]
        if key.startswith("add"):
            attrs += ["shape=circle", 'fillcolor="#fff4e6"', 'color="#e8590c"']
        if key in anchors:
            attrs += [f"URL={dot_quote('#' + anchors[key])}", 'target="_self"', 'fillcolor="#dbe8ff"']
        lines.append(f"  {key} [{', '.join(attrs)}];")
    lines.append("  x -> ln1 -> attn -> add1 -> ln2 -> ffn -> add2 -> y;")
    lines.append(f'  x -> add1 [style=dashed, color="#e8590c", label={dot_quote(labels["skip"])}];')
    lines.append(f'  add1 -> add2 [style=dashed, color="#e8590c", label={dot_quote(labels["skip"])}];')
    lines.append("}")
    return "\n".join(lines)


def pre_post_dot(kind: str, labels: dict[str, str], font_size: int = DEFAULT_FONT_PT) -> str:
    """Pre-LN: x + F(LN(x)) (the norm inside the branch); Post-LN: LN(x + F(x)) (the norm on the main path)."""
    if kind not in ("pre", "post"):
        raise ValueError(f"kind must be 'pre' or 'post', got {kind!r}")
    lines = ["digraph ln {"] + [line.replace("rankdir=LR", "rankdir=TB") for line in _head(font_size)]
    lines.append(f"  x [label={dot_quote('x')}];")
    lines.append(f"  f [label={dot_quote(labels['sublayer'])}];")
    lines.append(f'  add [label="+", shape=circle, fillcolor="#fff4e6", color="#e8590c"];')
    lines.append(f'  ln [label={dot_quote(labels["norm"])}, fillcolor="#e6fcf5", color="#2f9e44"];')
    lines.append(f"  y [label={dot_quote('y')}];")
    if kind == "pre":
        lines.append("  x -> ln -> f -> add -> y;")
        lines.append(f'  x -> add [style=dashed, color="#e8590c", label={dot_quote(labels["skip"])}];')
    else:
        lines.append("  x -> f -> add -> ln -> y;")
        lines.append(f'  x -> add [style=dashed, color="#e8590c", label={dot_quote(labels["skip"])}];')
    lines.append("}")
    return "\n".join(lines)
