"""In 中文 mode no English words are left on screen.

Every page is rendered in zh; the visible text is collected from the elements (text, labels,
options, table headers, metrics) and from the charts' own text (titles, axis and legend
titles, subplot titles, the diagram's labels). A run of 3 or more ASCII letters fails unless
it is an allowed name: a model or technical term the Chinese textbook itself writes in Latin
letters, a unit, a trace name, or a token string (data, not interface text).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest

from tests.app.conftest import open_page, spaces, vega_spec
from ui import nav

# Words the Chinese textbook writes in Latin letters itself, names and units.
ALLOWED = {
    # technical terms as the textbook writes them
    "token", "tokens", "GPT", "BPE", "Softmax", "softmax", "LayerNorm", "RMSNorm", "RMS", "GELU", "SwiGLU",
    "SiLU", "ReLU", "RoPE", "MLP", "FFN", "Top", "top", "logit", "logits", "Logits", "Transformer", "Attention",
    "Self", "Multi", "Head", "Cache", "Embedding", "PCA", "cos", "sin", "exp", "log", "max", "argmax",
    "tanh", "MHA", "GQA", "MQA", "d_model", "d_head", "d_mlp", "n_ctx", "vocab_size", "endoftext",
    "UTF", "BertViz", "Vaswani", "RoFormer", "Llama", "LLaMA", "Qwen", "Mistral", "DeepSeek", "Kimi", "cl100k",
    "tiktoken", "softmax", "norm", "sqrt", "float", "bfloat", "int",
    # models, devices, units
    "classic", "modern", "CPU", "GPU", "CUDA", "MPS", "Apple", "Token", "Journey",
    "KB", "MB", "GB", "TB", "ms",
    # more terms the textbook writes in Latin letters (Temperature, Query, batch, Pre-LN, MoE...)
    "Temperature", "Query", "Key", "Value", "batch", "Pre", "Post", "BatchNorm", "MoE", "Norm", "Head",
    "Scout", "Small", "Swish", "pos", "Flash",
    # names of methods, libraries and model sizes; variables in formulas; the "-inf" input syntax
    "Logit", "lens", "transformers", "PyTorch", "medium", "large", "gate", "down", "base", "inf", "sum",
    "numel", "GiB", "MiB", "KiB",
    # keys on the keyboard, the BPE modes' names, formula names inside the diagram
    "Ctrl", "Enter", "Tab", "Shift", "gpt", "attn", "mlp",
    # what a language switch must show in its own language
    "English",
}
ASCII_RUN = re.compile(r"[A-Za-z]{3,}")
# Spans that are code, formulas or links: their letters are not words to translate.
STRIP = [re.compile(p) for p in (
    r"`[^`]*`", r"\$[^$]*\$", r"https?://\S+", r"\[[^\]]*\]\([^)]*\)",
    r"\\n",  # DOT's line break inside diagram labels
    r"\bblocks\.\d+\.[\w.]+",  # trace names such as blocks.0.hook_resid_pre
    r"\b\w*_\w*\b",  # identifiers such as d_model, hook_pattern
    r"<0x[0-9A-Fa-f]{2}>",  # byte tokens
    r"⟦[^⟧]*⟧",  # a missing translation key (test_i18n and assert_clean catch those)
    r":(?:red|green|blue|orange|violet|gray|grey|rainbow|primary)(?:-background)?\[",  # Streamlit colour markup
)]
TOKEN_OPTION = re.compile(r"\s·\s#\d+$")  # a token picked from the vocabulary: "␣the  · #662"


def _pages() -> list[str]:
    return [p.page_id for _, ps in nav.existing_sections() for p in ps]


def _vega_text(node: Any, out: list[str]) -> None:
    """Titles and axis/legend titles of a Vega-Lite spec (not its data)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("datasets", "data", "values"):
                continue
            if key == "title" and isinstance(value, str):
                out.append(value)
            elif key == "title" and isinstance(value, list) and all(isinstance(v, str) for v in value):
                out.append(" ".join(value))  # a title in lines
            elif key == "title" and isinstance(value, dict) and isinstance(value.get("text"), str):
                out.append(value["text"])
            elif key == "labelExpr" and isinstance(value, str) and value.startswith("["):
                out.extend(json.loads(value[:value.rindex("][")] + "]"))  # names drawn as labels (the head grid)
            else:
                _vega_text(value, out)
    elif isinstance(node, list):
        for item in node:
            _vega_text(item, out)


def visible_text(at: Any) -> Iterator[tuple[str, str]]:
    """(where, text) for everything a student reads on the page."""
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        for el in getattr(at, kind):
            if kind == "markdown" and str(el.value).startswith("<svg"):
                continue  # a drawing: its texts are read below, not its markup
            yield kind, str(el.value)
    for el in at.metric:
        yield "metric", f"{el.label} {el.value}"
    for kind in ("button", "toggle", "checkbox", "slider", "number_input", "text_input", "text_area",
                 "select_slider"):
        for el in getattr(at, kind):
            yield kind, str(el.label)
            if getattr(el, "help", None):
                yield f"{kind} help", str(el.help)
    for kind in ("selectbox", "radio", "multiselect"):
        for el in getattr(at, kind):
            yield kind, str(el.label)
            for option in el.options:
                if not TOKEN_OPTION.search(str(option)):  # token strings are data
                    yield f"{kind} option", str(option)
    for kind in ("tabs", "expander"):
        for el in getattr(at, kind):
            yield kind, str(el.label)
    for el in at.dataframe:
        for column in el.value.columns:
            yield "table header", str(column)
    for el in at.get("vega_lite_chart"):
        texts: list[str] = []
        _vega_text(vega_spec(el), texts)
        yield from (("chart", x) for x in texts)
    assert not at.get("plotly_chart")  # every chart is Vega-Lite or a component of ours
    for space in spaces(at).values():  # the 3-D spaces: title, axes, legend groups, their own words
        yield "space3d", space["title"]
        yield from (("space3d axis", a) for a in space["axes"])
        yield from (("space3d legend", g["name"]) for g in space["groups"])
        yield from (("space3d label", v) for v in space["labels"].values())
        views = space.get("views") or {}  # the embedding map's own toggles
        yield from (("space3d views", views[k]) for k in ("only_label", "fit_label", "fit_help") if k in views)
        for fit in views.get("fits", []):
            yield from (("space3d fit", fit[k]) for k in ("label", "caption"))
    yield from _component_words(at)
    for el in at.markdown:
        if el.value.startswith("<svg"):  # a drawing (ui.diagram): its texts and its lines' tooltips
            root = ET.fromstring(el.value)
            for tag in ("text", "title"):
                for node in root.iter("{http://www.w3.org/2000/svg}" + tag):
                    yield "diagram", "".join(node.itertext())
            yield "diagram", root.get("aria-label")


def _component_words(at: Any) -> Iterator[tuple[str, str]]:
    """The words our page components draw themselves (the BPE steps, the head picker)."""
    from ui.components import bpe_steps, mha_heads

    def walk(node: Any) -> Iterator[dict]:
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name in (
                bpe_steps.COMPONENT_NAME, mha_heads.COMPONENT_NAME):
            yield json.loads(proto.json)
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    for data in walk(at.main):
        for key in ("labels", "text"):  # templates: the browser fills each {name} with a number or a token
            words = data.get(key)  # (the head picker's "labels" are the prompt's tokens: data, not words)
            if isinstance(words, dict):
                yield from ((f"component {key}", re.sub(r"\{\w+\}", " ", v)) for v in words.values())
        yield from (("component behaviour", b["label"]) for b in data.get("behaviours", []))
        yield from (("component behaviour", name) for name in data.get("behaviour_names", []))


def english_words(text: str, allowed: set[str]) -> list[str]:
    for pattern in STRIP:
        text = pattern.sub(" ", text)
    return [w for w in ASCII_RUN.findall(text) if w not in allowed]


def test_english_words_are_found() -> None:
    assert english_words("Upload 5MB per file", ALLOWED) == ["Upload", "per", "file"]
    assert english_words("模型：`classic` 的 token，CPU（2 个线程）", ALLOWED) == []
    assert english_words("层归一化 layernorm · 4 heads", ALLOWED) == ["layernorm", "heads"]


@pytest.mark.parametrize("page", _pages())
def test_no_english_in_chinese_mode(page: str) -> None:
    at = open_page(None if page == "overview" else page, lang="zh", prompt="法国的首都是")
    assert not at.exception, [e.value for e in at.exception]
    # Token strings of the prompt and of the textbook's examples are data, not interface text.
    from ui.resources import get_model

    tokenizer = get_model(at.session_state["model"]).tokenizer
    tokens = {w for tok in tokenizer.encode_tokens("法国的首都是") for w in ASCII_RUN.findall(tok)} \
        if hasattr(tokenizer, "encode_tokens") else set()
    from ui.presets import PROMPT_PRESETS

    # The example prompts (some are English on purpose) and the textbook's English example words.
    examples = {w for preset in PROMPT_PRESETS.values() for w in ASCII_RUN.findall(preset.text)}
    from core.lessons.head_analysis import COREF_PAIRS

    examples |= {w for pair in COREF_PAIRS for case in (pair.to_fruit, pair.to_container)
                 for w in ASCII_RUN.findall(case.prompt)}
    examples |= {"full", "ripe", "low", "lower", "lowest", "newest", "widest", "est", "strawberry", "bakers", "teachers", "readers"}
    # A teacher's model names (other tests register tiny ones in this process) are names, not text.
    from ui.resources import available_model_names

    names = {w for name in available_model_names() for w in ASCII_RUN.findall(name)}
    allowed = ALLOWED | tokens | examples | names
    found: dict[tuple[str, str], str] = {}
    # A neuron's firing contexts (Transformer block) quote the bilingual training corpus: data, like
    # a data frame's cells; only the table's header is interface text.
    from ui.i18n import translate

    contexts = f"| {translate('transformer_block.kv.col.act', 'zh')} |"
    for where, text in visible_text(at):
        if where == "markdown" and text.startswith(contexts):
            text = text.splitlines()[0]
        for word in english_words(text, allowed):
            found.setdefault((where, word), text[:140])
    assert not found, "\n".join(f"{where}: {word!r} in {text!r}" for (where, word), text in found.items())
