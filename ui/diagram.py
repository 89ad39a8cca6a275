"""The Overview's pipeline diagram and the block drawings, laid out here and sent as SVG.

The drawing is three fixed columns (input, one block, output) of six boxes each, so it is laid
out in Python: the browser only paints it, with no Graphviz module to fetch and no layout to
run on each new prompt (the Graphviz version cost ~0.35 s of a cold start and ~1 s of layout per
prompt on this box). Pure string building, tested without Streamlit. Every text that reaches
the SVG (the prompt, its tokens, translated labels) goes through ``svg_escape``, which leaves
neither HTML nor Markdown to read in it; the only attributes built from data are link targets,
which come from our own page list and the view's URL-encoded query.

``chain_svg`` lays out the block pages' drawings the same way (``ui.block_diagram``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_SHOWN_TOKENS = 8
DIAGRAM_PX = 13  # the boxes' text, in px at the drawing's own size
PRESENTER_DIAGRAM_PX = 17
MAX_SHOWN_CHARS = 40


@dataclass(frozen=True)
class PipelineValues:
    """Live values for the current prompt, already formatted for display."""

    text: str
    tokens: list[str]
    ids: list[int]
    n_layer: int
    n_head: int
    d_model: int
    d_mlp: int
    vocab_size: int
    positional: str
    norm: str
    mlp: str
    top_token: str
    top_prob: float


def _shorten(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _list(items: list[str]) -> str:
    shown = items[:MAX_SHOWN_TOKENS]
    more = "" if len(items) <= MAX_SHOWN_TOKENS else f" … (+{len(items) - MAX_SHOWN_TOKENS})"
    return "[" + ", ".join(shown) + "]" + more


# Small words inside node values; pages pass translated ones (``words``), these are the English.
DEFAULT_WORDS: dict[str, str] = {
    "heads": "heads", "vocab": "vocab", "residual": "residual", "top": "top",
    "rope_value": "rotates q, k in attention", "rope_add": "nothing added", "rope_edge": "rotates q, k",
}


NODE_KEYS: tuple[str, ...] = (
    "text", "tokenizer", "ids", "embed", "pos", "add", "ln1", "attn", "resid1", "ln2", "mlp", "resid2",
    "ln_final", "lm_head", "logits", "softmax", "sample", "append",
)
COLUMNS: tuple[tuple[str, ...], ...] = (NODE_KEYS[:6], NODE_KEYS[6:12], NODE_KEYS[12:])

FONT_FAMILY = "Noto Sans CJK SC, Noto Sans, sans-serif"
BOX_FILL, LINK_FILL, BOX_LINE = "#eef3fb", "#dbe8ff", "#5b7bb5"
EDGE, SOFT_TEXT, CLUSTER_LINE, INK = "#7a8aa8", "#7f8ca3", "#9aa7bf", "#1b1b1b"


@dataclass(frozen=True)
class DiagramNode:
    title: str
    value: str
    page: str | None  # the page a click opens (only one that exists: see ``pipeline_svg``)


def pipeline_nodes(values: PipelineValues, labels: dict[str, str], words: dict[str, str] | None = None,
                   kinds: dict[str, str] | None = None) -> dict[str, DiagramNode]:
    """Each box's translated title and live value for the prompt, and the page it belongs to.

    ``words`` translates the small words inside values (see ``DEFAULT_WORDS``), ``kinds`` the
    names of the positional/norm/MLP kinds (e.g. "layernorm"). With RoPE nothing is added to
    the token vectors: the position box says it rotates q and k, and the sum box says so.
    """
    words = {**DEFAULT_WORDS, **(words or {})}
    kinds = kinds or {}
    rope = values.positional == "rope"
    n = len(values.ids)
    tok = _list(list(values.tokens))
    ids = _list([str(i) for i in values.ids])
    raw: dict[str, tuple[str, str, str | None]] = {
        "text": (labels["text"], _shorten(values.text), None),
        "tokenizer": (labels["tokenizer"], _shorten(tok, 60), "tokenization"),
        "ids": (labels["ids"], _shorten(ids, 60), "tokenization"),
        "embed": (labels["embed"], f"{n} × {values.d_model}  ({words['vocab']} {values.vocab_size})", "embeddings"),
        "pos": (labels["pos"], (f"{kinds.get('rope', 'RoPE')}: {words['rope_value']}" if rope
                                else f"{kinds.get(values.positional, values.positional)}: {n} × {values.d_model}"),
                "positional_encoding"),
        "add": (labels["add_rope"] if rope and "add_rope" in labels else labels["add"],
                f"{n} × {values.d_model}" + (f"  ({words['rope_add']})" if rope else ""), "embeddings"),
        "ln1": (labels["ln1"], kinds.get(values.norm, values.norm), None),
        "attn": (labels["attn"], f"{values.n_head} {words['heads']} · {n}×{n}", "multi_head_attention"),
        "resid1": (labels["resid1"], "x + attn(x)", None),
        "ln2": (labels["ln2"], kinds.get(values.norm, values.norm), None),
        "mlp": (labels["mlp"], f"{kinds.get(values.mlp, values.mlp)}: {values.d_model}→{values.d_mlp}→{values.d_model}", None),
        "resid2": (labels["resid2"], "x + mlp(x)", None),
        "ln_final": (labels["ln_final"], kinds.get(values.norm, values.norm), None),
        "lm_head": (labels["lm_head"], f"{values.d_model} → {values.vocab_size}", "logits_sampling"),
        "logits": (labels["logits"], f"{n} × {values.vocab_size}", "logits_sampling"),
        "softmax": (labels["softmax"], f"{words['top']}: {values.top_token}  p={values.top_prob:.2f}", "logits_sampling"),
        "sample": (labels["sample"], f"→ {values.top_token}", "generation"),
        "append": (labels["append"], f"{n} → {n + 1}", "generation"),
    }
    return {key: DiagramNode(*raw[key]) for key in NODE_KEYS}


def text_width(text: str, font_size: float) -> float:
    """A generous estimate of the drawn width: wide (CJK) characters one em, others 0.62 em.

    The SVG is laid out on the server, where the browser's font metrics are unknown; boxes are
    sized from this estimate, which errs wide so that no label crosses its box.
    """
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in ("W", "F"))
    return font_size * (wide + 0.62 * (len(text) - wide))


def svg_escape(text: str) -> str:
    """Text or attribute value for the SVG: every ASCII sign a numeric character reference.

    The SVG reaches the page through Streamlit's Markdown (its HTML element strips SVG), which
    still reads the text between tags as Markdown: ``*``, ``_``, `` ` ``, ``[``, ``$`` (LaTeX),
    ``:`` (emoji and colour codes) would turn a prompt into markup. As references they are
    plain characters to both Markdown and HTML. Letters, digits, spaces and non-ASCII stay.
    """
    return "".join(ch if ch.isalnum() or ch == " " or ord(ch) > 127 else f"&#{ord(ch)};" for ch in text)


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


def _arrow_head(x: float, y: float, dx: float, dy: float, size: float, colour: str = EDGE) -> str:
    """A filled triangle whose tip is at (x, y), pointing along (dx, dy)."""
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    ux, uy = dx / length, dy / length
    bx, by = x - ux * size, y - uy * size
    px, py = -uy * size * 0.45, ux * size * 0.45
    return (f'<polygon points="{x:.1f},{y:.1f} {bx + px:.1f},{by + py:.1f} {bx - px:.1f},{by - py:.1f}" '
            f'fill="{colour}"/>')


Point = tuple[float, float]


def svg_arrow(points: list[Point], size: float, dashed: bool = False, label: str | None = None,
              colour: str = EDGE) -> str:
    """An arrow along straight segments (rounded corners), its head at the last point.

    ``label`` becomes the line's tooltip (hover text) as well as its accessible name.
    """
    radius = size * 0.8
    d = f"M{points[0][0]:.1f},{points[0][1]:.1f}"
    for (x0, y0), (x1, y1), (x2, y2) in zip(points, points[1:], points[2:]):
        # Stop short of the corner, then curve into the next segment.
        r_in = min(radius, abs(x1 - x0) / 2 + abs(y1 - y0) / 2)
        r_out = min(radius, abs(x2 - x1) / 2 + abs(y2 - y1) / 2)
        r = min(r_in, r_out)
        ax, ay = x1 - _sign(x1 - x0) * r, y1 - _sign(y1 - y0) * r
        bx, by = x1 + _sign(x2 - x1) * r, y1 + _sign(y2 - y1) * r
        d += f" L{ax:.1f},{ay:.1f} Q{x1:.1f},{y1:.1f} {bx:.1f},{by:.1f}"
    end, before = points[-1], points[-2]
    d += f" L{end[0]:.1f},{end[1]:.1f}"
    dash = f' stroke-dasharray="{size * 0.5:.1f},{size * 0.35:.1f}"' if dashed else ""
    title = f"<title>{svg_escape(label)}</title>" if label else ""
    return (f'<g>{title}<path d="{d}" fill="none" stroke="{colour}" stroke-width="1.2"{dash}/>'
            + _arrow_head(end[0], end[1], end[0] - before[0], end[1] - before[1], size, colour) + "</g>")


def _sign(value: float) -> float:
    return (value > 0) - (value < 0)


def svg_lane_label(text: str, x: float, y: float, font_size: float) -> str:
    """A label written downwards beside a vertical line (Chinese stays upright)."""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" font-size="{font_size:.0f}" '
            f'fill="{SOFT_TEXT}" style="writing-mode: vertical-rl">{svg_escape(text)}</text>')


def _svg_open(width: float, height: float, label: str, min_scale: float, has_links: bool = False) -> str:
    """The drawing's own tag: its size, its name for screen readers, the smallest scale it takes.

    A drawing with links is a named group, not an image: an image's content is hidden from
    screen readers, links included (axe: nested-interactive); as a group each box is read and
    each link is a link of its own, reached by Tab."""
    role = "group" if has_links else "img"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="100%" '
            f'role="{role}" aria-label="{svg_escape(label)}" font-family="{FONT_FAMILY}" '
            f'style="max-width: {width:.0f}px; min-width: {width * min_scale:.0f}px; height: auto; display: block;">')


def _box_text(at: _Box, texts: list[str], *, font_size: float, pad: float, line: float) -> str:
    """A box's rows as one ``<text>``: one ``<tspan>`` per row, centred on its own line.

    The rows are one text so that a screen reader (and axe) reads them as the words they are,
    "norm 1 LayerNorm", the same as the link's name: separate ``<text>`` elements are read run
    together ("norm 1LayerNorm"). The space between two rows is a ``<tspan>`` of its own, placed
    on the upper row's line: its own anchored chunk, so it moves no row off centre.
    """
    rows = []
    for row, text in enumerate(texts):
        y = at.y + pad / 2 + line * (0.78 + row)
        if row:
            rows.append(f'<tspan x="{at.cx:.1f}" y="{y - line:.1f}"> </tspan>')
        rows.append(f'<tspan x="{at.cx:.1f}" y="{y:.1f}">{svg_escape(text)}</tspan>')
    return f'<text text-anchor="middle" font-size="{font_size:.0f}" fill="{INK}">{"".join(rows)}</text>'


def _box_svg(at: _Box, texts: list[str], *, fill: str, stroke: str, radius: float, font_size: float,
             pad: float, line: float, href: str | None = None, page: str | None = None) -> str:
    """One box and its lines of text, centred; inside a link to ``href`` when given (``page``: the
    page it opens, as ``data-page``)."""
    parts = [f'<rect x="{at.x:.1f}" y="{at.y:.1f}" width="{at.w:.1f}" height="{at.h:.1f}" rx="{radius:.1f}" '
             f'fill="{fill}" stroke="{stroke}"/>', _box_text(at, texts, font_size=font_size, pad=pad, line=line)]
    if href:
        page_attr = f' data-page="{svg_escape(page)}"' if page else ""
        # Named by its visible words (a name that differs from them confuses voice control).
        name = svg_escape(" ".join(text for text in texts if text))
        return (f'<a href="{svg_escape(href)}" target="_self"{page_attr} aria-label="{name}" '
                f'style="text-decoration: none">'
                + "".join(parts) + "</a>")
    return "<g>" + "".join(parts) + "</g>"


@dataclass(frozen=True)
class _PipelineLayout:
    """Where ``pipeline_svg`` puts its boxes: one box per node, one dashed frame per column."""

    boxes: dict[str, _Box]
    clusters: list[_Box]
    cluster_titles: tuple[str, str, str]
    width: float
    height: float
    gap_h: float  # between the columns: room for the cross-column arrows
    left_bracket: float  # column 1: the embedding -> sum arrow runs past the position box
    residual_w: float  # right of the block's boxes: the residual bracket and its label


def _pipeline_layout(nodes: dict[str, DiagramNode], values: PipelineValues, labels: dict[str, str],
                     fs: float) -> _PipelineLayout:
    """Three columns of boxes, each as wide as its longest text (or its title) needs."""
    line = fs * 1.35
    pad = fs * 0.8
    box_h = 2 * line + pad
    gap_v = fs * 1.7  # between boxes of a column: room for an arrow
    cluster_pad = fs * 0.9
    title_h = fs * 1.9  # a column's title above its first box
    margin = fs * 0.5
    residual_w = fs * 3

    cluster_titles = (
        labels["text"] + " → " + labels["add"],
        labels["block"] + f" × {values.n_layer}",
        labels["ln_final"] + " → " + labels["append"],
    )
    widths = []
    for keys, title in zip(COLUMNS, cluster_titles):
        longest = max(max(text_width(nodes[k].title, fs), text_width(nodes[k].value, fs)) for k in keys)
        widths.append(max(longest + 2 * pad, fs * 9, text_width(title, fs + 1) + fs - 2 * cluster_pad))
    # Gaps between the columns hold the cross-column arrows, each on a lane of its own.
    gap_h = fs * 5.5
    left_bracket = fs * 1.4

    boxes: dict[str, _Box] = {}
    clusters: list[_Box] = []
    x = margin
    for column, (keys, width) in enumerate(zip(COLUMNS, widths)):
        inner_left = x + cluster_pad + (left_bracket if column == 0 else 0)
        right_extra = residual_w if column == 1 else 0
        y = margin + title_h
        for key in keys:
            boxes[key] = _Box(inner_left, y, width, box_h)
            y += box_h + gap_v
        cluster_w = inner_left - x + width + cluster_pad + right_extra
        clusters.append(_Box(x, margin, cluster_w, y - gap_v + cluster_pad - margin))
        x += cluster_w + gap_h
    return _PipelineLayout(boxes, clusters, cluster_titles, width=x - gap_h + margin,
                           height=clusters[0].bottom + margin, gap_h=gap_h, left_bracket=left_bracket,
                           residual_w=residual_w)


def _pipeline_edges(layout: _PipelineLayout, rope: bool, words: dict[str, str], fs: float) -> list[str]:
    """The arrows: down each column, then across the gaps on lanes that never cross the flow."""
    boxes, clusters, gap_h = layout.boxes, layout.clusters, layout.gap_h
    small = max(9.0, fs - 2)
    head = fs * 0.75
    edges: list[str] = []
    for keys in COLUMNS:
        for a, b in zip(keys, keys[1:]):
            if (a, b) == ("embed", "pos"):
                continue  # the position vectors are not computed from the token vectors
            if (a, b) == ("pos", "add") and rope:
                continue  # RoPE adds nothing to the sum
            edges.append(svg_arrow([(boxes[a].cx, boxes[a].bottom), (boxes[b].cx, boxes[b].y)], head))
    embed, pos, add = boxes["embed"], boxes["pos"], boxes["add"]
    ln1, attn, resid1, resid2, ln_final = (boxes[k] for k in ("ln1", "attn", "resid1", "resid2", "ln_final"))
    # Token vectors -> sum: a bracket left of the position box.
    side = embed.x - layout.left_bracket * 0.6
    edges.append(svg_arrow([(embed.x, embed.cy), (side, embed.cy), (side, add.cy), (add.x, add.cy)], head))
    # Lanes in the first gap, left to right: RoPE's rotation, the flow into the block, the
    # residual. The flow leaves the sum above the residual, so the two never cross; RoPE's
    # arrow crosses the flow once, at the attention box's height.
    gap_left = clusters[0].right
    rope_lane, flow_lane, residual_lane = (gap_left + gap_h * f for f in (0.2, 0.45, 0.7))
    low, high = add.cy + add.h * 0.22, add.cy - add.h * 0.22
    edges.append(svg_arrow([(add.right, high), (flow_lane, high), (flow_lane, ln1.cy), (ln1.x, ln1.cy)], head))
    edges.append(svg_arrow([(add.right, low), (residual_lane, low), (residual_lane, resid1.cy), (resid1.x, resid1.cy)],
                        head, dashed=True, label=words["residual"]))
    edges.append(svg_lane_label(words["residual"], residual_lane + small * 0.8, (low + resid1.cy) / 2, small))
    if rope:  # the position box rotates q and k inside attention
        edges.append(svg_arrow([(pos.right, pos.cy), (rope_lane, pos.cy), (rope_lane, attn.cy), (attn.x, attn.cy)],
                            head, dashed=True, label=words["rope_edge"]))
    # The residual past the MLP: a bracket right of the block's boxes; the flow to the final
    # norm leaves below where it arrives.
    bracket = resid1.right + layout.residual_w * 0.4
    arrive = resid2.cy - resid2.h * 0.22
    edges.append(svg_arrow([(resid1.right, resid1.cy), (bracket, resid1.cy), (bracket, arrive), (resid2.right, arrive)],
                        head, dashed=True, label=words["residual"]))
    edges.append(svg_lane_label(words["residual"], bracket + small * 0.8, (resid1.cy + arrive) / 2, small))
    leave = resid2.cy + resid2.h * 0.22
    out_lane = clusters[1].right + gap_h * 0.5
    edges.append(svg_arrow([(resid2.right, leave), (out_lane, leave), (out_lane, ln_final.cy), (ln_final.x, ln_final.cy)],
                        head))
    return edges


def pipeline_svg(values: PipelineValues, labels: dict[str, str], links: dict[str, str],
                 words: dict[str, str] | None = None, kinds: dict[str, str] | None = None,
                 font_size: int = DIAGRAM_PX, min_scale: float = 0.75) -> str:
    """The journey diagram as SVG; ``labels`` are translated titles, ``links`` page -> URL.

    Each box shows its title and the live value for the prompt; a box whose page exists (is in
    ``links``) is a link to it (``ui.page.in_app_links`` keeps the click inside the session).
    Solid arrows carry the vectors; dashed ones are the residual stream (and, with RoPE, the
    rotation the position box applies to q and k). ``font_size`` is in px (presenter: larger).
    The drawing fits its column but shrinks no further than ``min_scale`` of its own size (so
    its text stays readable; a narrower column scrolls it sideways).
    """
    words = {**DEFAULT_WORDS, **(words or {})}
    nodes = pipeline_nodes(values, labels, words, kinds)
    fs = float(font_size)
    layout = _pipeline_layout(nodes, values, labels, fs)

    has_links = any(nodes[k].page is not None and nodes[k].page in links for k in NODE_KEYS)
    out = [_svg_open(layout.width, layout.height, " → ".join(nodes[k].title for k in NODE_KEYS), min_scale,
                     has_links)]
    for cluster, title in zip(layout.clusters, layout.cluster_titles):
        out.append(f'<rect x="{cluster.x:.1f}" y="{cluster.y:.1f}" width="{cluster.w:.1f}" height="{cluster.h:.1f}" '
                   f'rx="{fs * 0.6:.1f}" fill="none" stroke="{CLUSTER_LINE}" stroke-dasharray="5,4"/>')
        out.append(f'<text x="{cluster.cx:.1f}" y="{cluster.y + fs * 1.35:.1f}" text-anchor="middle" '
                   f'font-size="{fs + 1:.0f}" fill="{SOFT_TEXT}">{svg_escape(title)}</text>')
    out.extend(_pipeline_edges(layout, values.positional == "rope", words, fs))

    for key in NODE_KEYS:
        node = nodes[key]
        linked = node.page is not None and node.page in links
        out.append(_box_svg(layout.boxes[key], [node.title, node.value], fill=LINK_FILL if linked else BOX_FILL,
                            stroke=BOX_LINE, radius=fs * 0.45, font_size=fs, pad=fs * 0.8, line=fs * 1.35,
                            href="./" + links[node.page] if linked else None, page=node.page))
    out.append("</svg>")
    return "".join(out)


@dataclass(frozen=True)
class ChainBox:
    """One box of a vertical chain (``chain_svg``)."""

    title: str
    value: str = ""  # a second line; "" for none
    href: str | None = None  # a link, e.g. "#anchor" on the same page
    kind: str = "box"  # "box", "sum" (a residual addition: orange) or "norm" (green)


SKIP_LINE = "#e8590c"
_KIND_COLOURS = {"box": (BOX_FILL, BOX_LINE), "sum": ("#fff4e6", SKIP_LINE), "norm": ("#e6fcf5", "#2f9e44")}


def chain_svg(boxes: list[ChainBox], skips: list[tuple[int, int, str]], *, label: str,
              font_size: int = DIAGRAM_PX, min_scale: float = 0.75) -> str:
    """Boxes one under the other, joined by arrows; ``skips`` (from, to, label) are dashed
    orange arrows on the right (the residual connections), their labels written beside them.

    ``label`` names the drawing for screen readers. Same rules as ``pipeline_svg``: every text
    through ``svg_escape``; the drawing fits its column down to ``min_scale`` of its size.
    """
    fs = float(font_size)
    small = max(9.0, fs - 2)
    line, pad, gap_v, margin = fs * 1.35, fs * 0.8, fs * 1.5, fs * 0.5
    lane_w = fs * 3 if skips else 0.0
    widths = [max(text_width(b.title, fs), text_width(b.value, fs)) + 2 * pad for b in boxes]
    column_w = max([*widths, fs * 6])
    cx = margin + column_w / 2
    placed: list[_Box] = []
    y = margin
    for box, width in zip(boxes, widths):
        height = (2 if box.value else 1) * line + pad
        width = width if box.kind == "sum" else column_w  # a sum is a pill of its own width
        placed.append(_Box(cx - width / 2, y, width, height))
        y += height + gap_v
    total_w, total_h = margin * 2 + column_w + lane_w, y - gap_v + margin
    head = fs * 0.75
    out = [_svg_open(total_w, total_h, label, min_scale, any(box.href for box in boxes))]
    for upper, lower in zip(placed, placed[1:]):
        out.append(svg_arrow([(upper.cx, upper.bottom), (lower.cx, lower.y)], head))
    starts, ends = {i for i, _, _ in skips}, {j for _, j, _ in skips}
    lane = margin + column_w + lane_w * 0.35
    for i, j, text in skips:
        # A box where one skip ends and the next begins: the arrival above, the departure below.
        src, dst = placed[i], placed[j]
        leave = src.cy + (src.h * 0.22 if i in ends else 0)
        arrive = dst.cy - (dst.h * 0.22 if j in starts else 0)
        out.append(svg_arrow([(src.right, leave), (lane, leave), (lane, arrive), (dst.right, arrive)], head,
                             dashed=True, label=text, colour=SKIP_LINE))
        out.append(svg_lane_label(text, lane + small * 0.8, (leave + arrive) / 2, small))
    for box, at in zip(boxes, placed):
        fill, stroke = _KIND_COLOURS.get(box.kind, _KIND_COLOURS["box"])
        fill = LINK_FILL if box.href and box.kind == "box" else fill
        out.append(_box_svg(at, [t for t in (box.title, box.value) if t], fill=fill, stroke=stroke,
                            radius=at.h / 2 if box.kind == "sum" else fs * 0.45, font_size=fs, pad=pad, line=line,
                            href=box.href))
    out.append("</svg>")
    return "".join(out)
