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


def pipeline_dot(values: PipelineValues, labels: dict[str, str], links: dict[str, str]) -> str:
    """Build the journey diagram; ``labels`` are translated node titles, ``links`` page URLs.

    Each node shows its title plus the live value for the prompt; nodes with a page of
    their own link to it.
    """
    n = len(values.ids)
    tok = _list([f"{t}" for t in values.tokens])
    nodes: dict[str, tuple[str, str | None]] = {
        "text": (f"{labels['text']}\n{_shorten(values.text)}", None),
        "tokenizer": (f"{labels['tokenizer']}\n{_shorten(tok, 60)}", "tokenization"),
        "ids": (f"{labels['ids']}\n{_shorten(_list([str(i) for i in values.ids]), 60)}", "tokenization"),
        "embed": (f"{labels['embed']}\n{n} × {values.d_model}  (vocab {values.vocab_size})", "embeddings"),
        "pos": (f"{labels['pos']}\n{values.positional}: {n} × {values.d_model}", "positional_encoding"),
        "add": (f"{labels['add']}\n{n} × {values.d_model}", "embeddings"),
        "ln1": (f"{labels['ln1']}\n{values.norm}", None),
        "attn": (f"{labels['attn']}\n{values.n_head} heads · {n}×{n} pattern", "multi_head_attention"),
        "resid1": (f"{labels['resid1']}\nx + attn(x)", None),
        "ln2": (f"{labels['ln2']}\n{values.norm}", None),
        "mlp": (f"{labels['mlp']}\n{values.mlp}: {values.d_model}→{values.d_mlp}→{values.d_model}", None),
        "resid2": (f"{labels['resid2']}\nx + mlp(x)", None),
        "ln_final": (f"{labels['ln_final']}\n{values.norm}", None),
        "lm_head": (f"{labels['lm_head']}\n{values.d_model} → {values.vocab_size}", "logits_sampling"),
        "logits": (f"{labels['logits']}\n{n} × {values.vocab_size}", "logits_sampling"),
        "softmax": (f"{labels['softmax']}\ntop: {values.top_token}  p={values.top_prob:.2f}", "logits_sampling"),
        "sample": (f"{labels['sample']}\n→ {values.top_token}", "generation"),
        "append": (f"{labels['append']}\n{n} → {n + 1} tokens", "generation"),
    }
    lines = [
        "digraph journey {",
        '  graph [rankdir=TB, bgcolor="transparent", nodesep=0.25, ranksep=0.22, fontname="Noto Sans CJK SC, sans-serif"];',
        '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", color="#5b7bb5", fontname="Noto Sans CJK SC, sans-serif", fontsize=11];',
        '  edge [color="#7a8aa8"];',
    ]

    def node_line(key: str) -> str:
        label, page = nodes[key]
        attrs = [f"label={dot_quote(label)}"]
        if page is not None and page in links:
            attrs += [f"URL={dot_quote('./' + links[page])}", 'target="_self"', 'fillcolor="#dbe8ff"']
        return f"  {key} [{', '.join(attrs)}];"

    for key in ("text", "tokenizer", "ids", "embed", "pos", "add"):
        lines.append(node_line(key))
    lines.append("  subgraph cluster_block {")
    lines.append(f"    label={dot_quote(labels['block'] + f' × {values.n_layer}')};")
    lines.append('    style="rounded,dashed"; color="#9aa7bf"; fontname="Noto Sans CJK SC, sans-serif";')
    for key in ("ln1", "attn", "resid1", "ln2", "mlp", "resid2"):
        lines.append("  " + node_line(key))
    lines.append("  }")
    for key in ("ln_final", "lm_head", "logits", "softmax", "sample", "append"):
        lines.append(node_line(key))
    chain = ["text", "tokenizer", "ids", "embed", "add", "ln1", "attn", "resid1", "ln2", "mlp",
             "resid2", "ln_final", "lm_head", "logits", "softmax", "sample", "append"]
    lines.append("  " + " -> ".join(chain) + ";")
    lines.append("  pos -> add;")
    lines.append("  { rank=same; embed; pos; }")
    lines.append('  add -> resid1 [style=dashed, label="residual", fontsize=9];')
    lines.append('  resid1 -> resid2 [style=dashed, label="residual", fontsize=9];')
    lines.append('  append -> text [style=dotted, constraint=false];')
    lines.append("}")
    return "\n".join(lines)
