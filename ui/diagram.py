"""The Overview's pipeline diagram as Graphviz DOT (rendered by st.graphviz_chart, no CDN).

Pure string building, so it is unit-tested without Streamlit. User text only ever enters
a DOT *quoted string* through ``dot_quote``, which escapes it; Graphviz then writes it
into the SVG as text, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SHOWN_TOKENS = 8
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


def dot_quote(text: str) -> str:
    """Quote text for DOT: escape backslashes and quotes, turn newlines into spaces.

    Example: dot_quote('a "b"') -> '"a \\\\"b\\\\""'
    """
    cleaned = text.replace("\\", "\\\\").replace('"', '\\"')
    cleaned = cleaned.replace("\r", " ").replace("\n", " ")
    return f'"{cleaned}"'


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


def pipeline_dot(values: PipelineValues, labels: dict[str, str], links: dict[str, str],
                 words: dict[str, str] | None = None, kinds: dict[str, str] | None = None,
                 font_size: int = 11) -> str:
    """Build the journey diagram; ``labels`` are translated node titles, ``links`` page URLs.

    Each node shows its title plus the live value for the prompt; nodes with a page of
    their own link to it. ``words`` translates the small words inside values (see
    ``DEFAULT_WORDS``), ``kinds`` the names of the positional/norm/MLP kinds (e.g.
    "layernorm"); ``font_size`` is in points (presenter mode passes a larger one).

    With RoPE (``values.positional == "rope"``) nothing is added to the token vectors: the
    position node feeds attention instead ("rotates q, k") and the add node says so.
    """
    words = {**DEFAULT_WORDS, **(words or {})}
    kinds = kinds or {}
    rope = values.positional == "rope"
    n = len(values.ids)
    tok = _list(list(values.tokens))
    ids = _list([str(i) for i in values.ids])
    # (title, live value, page it links to)
    nodes: dict[str, tuple[str, str, str | None]] = {
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
    lines = [
        "digraph journey {",
        '  graph [rankdir=TB, newrank=true, bgcolor="transparent", nodesep=0.3, ranksep=0.25, fontname="Noto Sans CJK SC, sans-serif"];',
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#5b7bb5", fontname="Noto Sans CJK SC, sans-serif", fontsize=' + str(int(font_size)) + '];',
        '  edge [color="#7a8aa8", fontcolor="#7f8ca3", fontname="Noto Sans CJK SC, sans-serif", fontsize='
        + str(max(9, int(font_size) - 2)) + '];',
        f"  graph [fontsize={int(font_size) + 1}];",
    ]

    def node_line(key: str) -> str:
        title, value, page = nodes[key]
        # Two centred lines: DOT's own "\\n" escape joins the separately quoted parts.
        label = dot_quote(title)[:-1] + "\\n" + dot_quote(value)[1:]
        attrs = [f"label={label}"]
        if page is not None and page in links:
            attrs += [f"URL={dot_quote('./' + links[page])}", 'target="_self"', 'fillcolor="#dbe8ff"']
        return f"  {key} [{', '.join(attrs)}];"

    # Three columns — input, one block, output — each a vertical chain, so the whole
    # journey fits on one screen. Cross-column edges do not constrain the layout.
    columns = (
        ("cluster_input", labels["text"] + " → " + labels["add"], ("text", "tokenizer", "ids", "embed", "pos", "add")),
        ("cluster_block", labels["block"] + f" × {values.n_layer}", ("ln1", "attn", "resid1", "ln2", "mlp", "resid2")),
        ("cluster_output", labels["ln_final"] + " → " + labels["append"],
         ("ln_final", "lm_head", "logits", "softmax", "sample", "append")),
    )
    for name, title, keys in columns:
        lines.append(f"  subgraph {name} {{")
        lines.append(f"    label={dot_quote(title)};")
        lines.append('    style="rounded,dashed"; color="#9aa7bf"; fontcolor="#7f8ca3"; fontname="Noto Sans CJK SC, sans-serif";')
        lines.extend("  " + node_line(key) for key in keys)
        lines.append("  }")
    lines.append("  embed -> pos [style=invis];")  # pos sits under embed
    if rope:  # RoPE adds nothing to the token vector: it rotates q and k inside attention
        lines.append("  embed -> add;")
        lines.append("  pos -> add [style=invis];")  # keep the column order of the learned layout
        lines.append(f"  pos -> attn [style=dashed, constraint=false, label={dot_quote(words['rope_edge'])}];")
    else:
        lines.append("  embed -> add; pos -> add;")
    lines.append("  ln1 -> attn -> resid1 -> ln2 -> mlp -> resid2;")
    lines.append("  ln_final -> lm_head -> logits -> softmax -> sample -> append;")
    lines.append("  text -> tokenizer -> ids -> embed;")
    lines.append("  { rank=same; text; ln1; ln_final; }")
    lines.append("  text -> ln1 -> ln_final [style=invis];")  # tops aligned, columns left to right
    lines.append("  add -> ln1 [constraint=false];")
    lines.append("  resid2 -> ln_final [constraint=false];")
    residual = dot_quote(words["residual"])
    lines.append(f"  add -> resid1 [style=dashed, constraint=false, label={residual}];")
    lines.append(f"  resid1 -> resid2 [style=dashed, constraint=false, label={residual}];")
    # No drawn loop edge from append back to text: it makes dot reorder the columns;
    # the append node's label (n → n+1) and the caption say it instead.
    lines.append("}")
    return "\n".join(lines)
