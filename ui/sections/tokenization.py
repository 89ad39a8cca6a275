"""Tokenization sections: watch BPE learn merges on your own text, then see how the model cuts any text.

Part 1 trains BPE once per (corpus, merges, mode) — cached — and sends the recorded trace to
the browser once: every merge step is replayed there (``ui.components.bpe_steps``), with no
round trip. Part 2 runs the live model's own tokenizer with a merge trace. All user text
reaches the screen through Altair charts, data frames, markdown code spans or the component's
text nodes: never as HTML.
"""

from __future__ import annotations

import hashlib
import time
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import streamlit as st

import ui.charts.common as draw

from core.text.bpe_view import (
    MAX_CORPUS_BYTES,
    KNOWN_VOCABULARIES,
    CorpusProblem,
    clean_corpus,
    decode_corpus,
    embedding_matrix_params,
    encode_words_at,
    line_costs,
    most_frequent_words,
    text_cost,
    token_lines,
    token_origins,
)
from core.engine.checkpoint import CheckpointError
from core.engine.prompt import MAX_PROMPT_CHARS, PromptProblem, clean_prompt
from core.text.corpus import cjk_lexicon
from core.text.tokenizer import TrainResult, train_bpe
from ui.charts.tokens import Chip, token_chips
from ui.i18n import t
from ui.messages import checkpoint_message
from ui import state
from ui.components import bpe_steps
from ui.page import Page, durable_tabs
from ui.resources import get_model
from ui.text import escape_markdown, markdown_table
from ui.tokens import display_token

PRESET_DIR = Path(__file__).resolve().parents[2] / "assets" / "bpe_presets"
CORPUS_PRESETS: tuple[str, ...] = ("seeds", "english", "chinese")
CUSTOM = "__custom__"
MODES: tuple[str, ...] = ("classic", "gpt")
MAX_TYPED_CORPUS = 200_000  # characters in the box; bigger corpora come as an uploaded file
MAX_MERGES = 1000
DEFAULT_MERGES = 10
WORDS_SHOWN = 24  # word rows in the chip view: enough to see patterns, short enough to read
MAX_CHIPS = 400  # tokens drawn in Part 2 (a 2,000-character prompt stays readable)
QUIRKS: tuple[str, ...] = ("strawberry", "numbers", "languages")
UPLOAD_SUFFIX = ".txt"  # the only uploads Part 1 reads (plain UTF-8 text)


# --- small state helpers (widget values that outlive a page change) ----------------------


def kept(key: str, default: Any = None) -> Any:
    """A durable value (declared and checked in ``ui.state``), or ``default`` before the first set."""
    return state.get(key, default) if state.durable_key(key) in st.session_state else default


def keep(key: str, value: Any) -> None:
    state.put(key, value)


def bind(key: str, default: Any) -> str:
    """Fill widget ``key`` from its durable copy before the widget is drawn; returns the key."""
    return state.bind(key, default=default)["key"]


def save(key: str):
    """``on_change`` callback: check the widget's value and write it back to its durable copy."""
    return state.commit(key)


def show_chart(spec: dict[str, Any]) -> None:
    """Draw a Vega-Lite spec, handing its datasets over as Arrow tables: Streamlit passes those
    straight through, where plain records would go through pandas (tens of ms per chart)."""
    fast = dict(spec)
    fast["datasets"] = {name: pa.Table.from_pylist(rows) for name, rows in spec.get("datasets", {}).items()}
    # A step changes the titles, the parameters and the data, never the layout: sent "live", the
    # browser swaps the data into the charts it has instead of building them again.
    draw.vega(fast, width="stretch", live=True)


def code(token: str) -> str:
    """A token as a markdown code span: literal text, visible spaces, never markup.

    Example: code(" low") -> "`␣low`"
    """
    shown = display_token(token)
    fence = "``" if "`" in shown else "`"
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


# --- cached work -------------------------------------------------------------------------


@cache
def preset_texts() -> dict[str, str]:
    """The shipped example corpora, read once (on first use): the only files this page ever reads.

    Widget values are never turned into paths (a crafted value could name any file): a value
    is only a key into this dict, built from the fixed names in ``CORPUS_PRESETS``.
    """
    return {name: (PRESET_DIR / f"{name}.txt").read_text(encoding="utf-8").strip() for name in CORPUS_PRESETS}


DEFAULT_PRESET = "seeds"


def preset_text(name: object) -> str:
    """The text of a known preset; anything else (a crafted widget value) gets the default."""
    texts = preset_texts()
    return texts.get(name, texts[DEFAULT_PRESET]) if isinstance(name, str) else texts[DEFAULT_PRESET]


@st.cache_data(max_entries=8, show_spinner=False)
def uploaded_corpus(data: bytes) -> str:
    """Check and decode an upload once, not on every rerun (a 2 MB scan takes ~0.5 s)."""
    return decode_corpus(data)


@st.cache_resource(max_entries=8, show_spinner=False)
def train(corpus: str, num_merges: int, mode: str) -> tuple[TrainResult, float]:
    """Train once per (corpus, merges, mode); shared read-only by every session."""
    start = time.perf_counter()
    result = train_bpe(corpus, num_merges, mode, cjk_lexicon=cjk_lexicon())
    return result, time.perf_counter() - start


@st.cache_data(max_entries=16, show_spinner=False)
def typed_corpus(text: str) -> str:
    return clean_corpus(text, max_chars=MAX_TYPED_CORPUS)


@st.cache_data(max_entries=1024, show_spinner=False)
def words_at_step(corpus: str, num_merges: int, mode: str, step: int) -> tuple[list[tuple[str, int, list[str]]], int]:
    """The most frequent words split after ``step`` merges, and how many distinct words there are."""
    result, _ = train(corpus, num_merges, mode)
    segmentation = result.segmentation_at(step)
    return most_frequent_words(segmentation, WORDS_SHOWN), len(segmentation)


# --- Part 1: BPE on your own text -------------------------------------------------------


def tabs() -> list:
    """Part 1 (BPE learns merges) and Part 2 (the model's tokenizer)."""
    return durable_tabs("tok_tab", {tab: t(f"tokenization.tab.{tab}") for tab in ("bpe", "model")})


def on_preset() -> None:
    choice = st.session_state.get("tok_corpus_preset")
    if choice == CUSTOM:
        return
    if not isinstance(choice, str) or choice not in preset_texts():  # a value no option offers
        st.session_state["tok_preset_refused"] = True
        choice = DEFAULT_PRESET
    keep("tok_corpus", preset_text(choice))
    keep("tok_merge_step", 0)


def corpus_controls() -> str | None:
    """Presets, the corpus box and an upload; returns the checked corpus (None: a message)."""
    left, right = st.columns([3, 2])
    with left:
        current, upload = _corpus_inputs()
    with right:
        _training_options(current)
    return _checked_corpus(upload)


def _corpus_inputs() -> tuple[str, Any]:
    """The preset, an upload and the corpus box: (the corpus as kept, the upload or None)."""
    current = kept("tok_corpus", preset_text("seeds"))
    matching = [name for name in CORPUS_PRESETS if preset_text(name) == current]
    st.session_state["tok_corpus_preset"] = matching[0] if matching else CUSTOM
    # Labels are translated now, not inside format_func: AppTest calls format_func
    # outside the script run, where the session's language is not known.
    preset_labels = {k: t(f"tokenization.preset.{'custom' if k == CUSTOM else k}") for k in (CUSTOM, *CORPUS_PRESETS)}
    if st.session_state.pop("tok_preset_refused", False):
        st.info(t("tokenization.preset.unknown"))
    st.selectbox(
        t("tokenization.preset"),
        list(preset_labels),
        format_func=preset_labels.__getitem__,
        key="tok_corpus_preset",
        on_change=on_preset,
    )
    # No ``type=``: Streamlit would refuse another name with an English exception before the page
    # runs; ``_checked_corpus`` refuses it in the page's language (the content is checked anyway).
    upload = st.file_uploader(
        t("tokenization.upload"), key="tok_upload",
        max_upload_size=MAX_CORPUS_BYTES // (1024 * 1024),  # = server.maxUploadSize in .streamlit/config.toml
        help=t("tokenization.upload.help", mb=MAX_CORPUS_BYTES // (1024 * 1024)),
    )
    # Streamlit's own "file too large" notice is English; the limit is said here in the page's language.
    st.caption(t("tokenization.upload.limit", mb=MAX_CORPUS_BYTES // (1024 * 1024)))
    st.text_area(
        t("tokenization.corpus"),
        key=bind("tok_corpus", preset_text("seeds")),
        on_change=save("tok_corpus"),
        height=110,
        max_chars=MAX_TYPED_CORPUS,
        disabled=upload is not None,
        help=t("tokenization.corpus.help"),
    )
    return current, upload


def _training_options(current: str) -> None:
    """BPE's mode (classic or GPT-style) and the number of merges."""
    mode_labels = {m: t(f"tokenization.mode.{m}") for m in MODES}
    st.radio(
        t("tokenization.mode"),
        MODES,
        format_func=mode_labels.__getitem__,
        key=bind("tok_mode", "classic"),
        on_change=save("tok_mode"),
        horizontal=True,
        help=t("tokenization.mode.help"),
    )
    st.number_input(
        t("tokenization.num_merges"),
        min_value=1,
        max_value=MAX_MERGES,
        step=1,
        key=bind("tok_num_merges", DEFAULT_MERGES),
        on_change=save("tok_num_merges"),
        help=t("tokenization.num_merges.help"),
    )
    if kept("tok_mode") == "classic" and any("\u4e00" <= ch <= "\u9fff" for ch in current[:2000]):
        st.caption(t("tokenization.mode.chinese_hint"))


def _checked_corpus(upload: Any) -> str | None:
    """The upload or the typed text, checked (None after a message in the page's language)."""
    try:
        if upload is not None:
            if not upload.name.lower().endswith(UPLOAD_SUFFIX):
                st.warning(t("tokenization.upload.wrong_type", suffix=UPLOAD_SUFFIX))
                return None
            text = uploaded_corpus(upload.getvalue())
            st.info(t("tokenization.upload.using", name=escape_markdown(upload.name), chars=f"{len(text):,}"))
            return text
        typed = kept("tok_corpus", "")
        if isinstance(typed, str) and len(typed) >= MAX_TYPED_CORPUS:
            # The browser cuts a longer paste at max_chars without a word, and a crafted longer value
            # is cut here: either way the student is told, and where a bigger corpus can go.
            st.info(t("tokenization.corpus.cut", kept=f"{MAX_TYPED_CORPUS:,}"))
            typed = typed[:MAX_TYPED_CORPUS]
        return typed_corpus(typed)
    except CorpusProblem as problem:
        st.warning(t(f"tokenization.corpus.problem.{problem.code}", mb=MAX_CORPUS_BYTES // (1024 * 1024)))
        return None


def encode_box() -> str:
    """The encode box's text input (a new word is new data: the server cuts it into words)."""
    st.subheader(t("tokenization.encode.title"))
    word = st.text_input(t("tokenization.encode.input"), key=bind("tok_encode_word", "lowest"),
                         on_change=save("tok_encode_word"), max_chars=200,
                         help=t("tokenization.encode.help"))
    if not word.strip():
        st.caption(t("tokenization.encode.empty"))
    return word


def corpus_scope(corpus: str) -> str:
    """A short name for a corpus: the browser starts a new corpus from the server's step."""
    return hashlib.sha256(corpus.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@st.cache_data(max_entries=16, show_spinner=False)
def step_data(corpus: str, num_merges: int, mode: str) -> dict[str, Any]:
    """The whole recorded training for the browser, once per (corpus, merges, mode)."""
    result, _ = train(corpus, num_merges, mode)
    shown, distinct = words_at_step(corpus, num_merges, mode, 0)  # starting symbols; the browser replays
    return bpe_steps.training_data(result, shown, distinct)


@st.cache_data(max_entries=64, show_spinner=False)
def encode_data(corpus: str, num_merges: int, mode: str, word: str) -> dict[str, Any]:
    """The encode box's words (cut as training cut them) with their starting symbols."""
    result, _ = train(corpus, num_merges, mode)
    return bpe_steps.encode_data(result, [(enc.word, enc.pieces) for enc in encode_words_at(result, word, 0)])


# Part 1 is two nested fragments: the corpus controls (a new corpus, mode or merge count
# retrains) and, inside, the step view (drawn by the browser, which moves the step itself; a new
# encode word reruns only the step view, from the cached training).
@st.fragment
def bpe_section() -> None:
    """The corpus controls, the training, and the step view inside."""
    corpus = corpus_controls()
    if corpus is None:
        return
    try:
        with st.spinner(t("tokenization.training")):
            result, seconds = train(corpus, int(kept("tok_num_merges")), kept("tok_mode"))
    except (ValueError, TypeError):  # the core's message is English: say it in the page's language
        st.warning(t("tokenization.train_failed", most=MAX_MERGES))
        return
    st.caption(t("tokenization.trained", merges=len(result.merges), words=len(result.words),
                 total=sum(f for _, f in result.words), seconds=f"{seconds:.2f}"))
    if result.stopped_early:
        st.info(t("tokenization.stopped_early", n=len(result.merges), asked=result.requested_merges))
    step_section(corpus, int(kept("tok_num_merges")), kept("tok_mode"))  # the same key: a cache hit


@st.fragment
def step_section(corpus: str, num_merges: int, mode: str) -> None:
    """Every recorded merge step, drawn in the browser: the slider, the buttons and Play send
    nothing to the server (``ui.components.bpe_steps``); a new encode word reruns only this."""
    result, _ = train(corpus, num_merges, mode)  # the cached training of the section above
    last = len(result.merges)
    if last == 0:
        st.info(t("tokenization.no_merges"))
    linked = int(kept("tok_merge_step", 0))
    step = min(max(linked, 0), last)
    if step != linked:  # a link made for a longer training: its last step
        keep("tok_merge_step", step)
    scope = corpus_scope(corpus)
    bpe_steps.bpe_steps(step_data(corpus, num_merges, mode), step, part="steps", key="tok_bpe_steps", scope=scope)
    word = encode_box()
    if word.strip():
        bpe_steps.bpe_steps(encode_data(corpus, num_merges, mode, word), step, part="encode", key="tok_bpe_encode",
                            scope=scope)


def bpe_part() -> None:
    """Part 1's intro and its sections."""
    st.markdown(t("tokenization.bpe.intro"))
    bpe_section()


# --- Part 2: the model's tokenizer ------------------------------------------------------


def use_quirk(name: str) -> None:
    keep("tok_model_text", t(f"tokenization.quirk.{name}.text"))


def use_sidebar_prompt() -> None:
    keep("tok_model_text", None)


def byte_string(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)


def merge_path_text(path: tuple[Any, ...]) -> str:
    if not path:
        return t("tokenization.model.no_merge")
    shown = [f"{display_token(m.pair[0])} + {display_token(m.pair[1])} → {display_token(m.new)}" for m in path[-5:]]
    return ("… " if len(path) > 5 else "") + "  ·  ".join(shown)


def quirk_note(quirk: str, tokenizer: Any, text: str) -> None:
    if quirk == "strawberry":
        word = " strawberry" if " strawberry" in text else "strawberry"
        pieces = tokenizer.tokens(word)
        st.info(t("tokenization.quirk.strawberry.note", n=len(pieces),
                  pieces=" + ".join(code(p) for p in pieces)))
    elif quirk == "numbers":
        a, b = tokenizer.tokens("9.11"), tokenizer.tokens("9.9")
        st.info(t("tokenization.quirk.numbers.note", a=" + ".join(code(p) for p in a), na=len(a),
                  b=" + ".join(code(p) for p in b), nb=len(b)))
    elif quirk == "languages":
        lines = [line for line in text.split("\n") if line.strip()]
        if len(lines) == 2:
            en, zh = (text_cost(line, len(tokenizer.encode(line))) for line in lines)
            st.info(t("tokenization.quirk.languages.note", en=en.tokens, en_chars=en.chars,
                      zh=zh.tokens, zh_chars=zh.chars))


def model_tokens(loaded: Any, prompt: str) -> None:
    """A text (a quirk, the sidebar's prompt, or typed) cut by the model's tokenizer."""
    tokenizer = loaded.tokenizer
    st.markdown(t("tokenization.quirks"))
    cols = st.columns(len(QUIRKS) + 1)
    for col, name in zip(cols, QUIRKS):
        col.button(t(f"tokenization.quirk.{name}"), key=f"tok_quirk_{name}", on_click=use_quirk,
                   args=(name,), width="stretch")
    cols[-1].button(t("tokenization.quirk.sidebar"), key="tok_quirk_sidebar", on_click=use_sidebar_prompt,
                    width="stretch")
    source = kept("tok_model_text")
    st.session_state["tok_model_text"] = prompt if source is None else source
    # As the sidebar prompt (ui.page): no max_chars, the limit in the help, a longer text refused
    # by clean_prompt with the translated "too long".
    st.text_area(t("tokenization.model.text"), key="tok_model_text", on_change=save("tok_model_text"),
                 height=90, help=t("tokenization.model.text.help", most=f"{MAX_PROMPT_CHARS:,}"))
    try:
        text = clean_prompt(st.session_state["tok_model_text"]).text
    except PromptProblem as problem:
        st.warning(t(f"prompt.problem.{problem.code}"))
        return
    trace = tokenizer.encode_with_trace(text)
    vocab = set(tokenizer.vocab())
    origins = token_origins(trace, known=lambda s: tokenizer.mode != "gpt" or s in vocab)
    raw = [tokenizer.token_bytes(i) for i in trace.ids]
    lines = token_lines(raw)
    cost = text_cost(text, len(trace.ids))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("tokenization.model.chars"), cost.chars)
    c2.metric(t("tokenization.model.tokens"), cost.tokens)
    c3.metric(t("tokenization.model.chars_per_token"), f"{cost.chars_per_token:.2f}")
    chips = [
        Chip(group=t("tokenization.model.line", n=line + 1), label=display_token(token), key=token,
             details=(str(i), byte_string(data), merge_path_text(origin.path)))
        for token, i, data, origin, line in list(zip(trace.tokens, trace.ids, raw, origins, lines))[:MAX_CHIPS]
    ]
    chart = token_chips(chips, title=t("tokenization.model.chart", n=cost.tokens),
                        x_title=t("tokenization.model.chart.x"), y_title=t("tokenization.model.chart.y"),
                        token_title=t("tokenization.token"),
                        detail_titles=(t("tokenization.model.id"), t("tokenization.model.bytes"),
                                       t("tokenization.model.path")),
                        line_width=56)
    show_chart(chart)
    if cost.tokens > MAX_CHIPS:
        st.caption(t("tokenization.model.truncated", shown=MAX_CHIPS, total=cost.tokens))
    ids = ", ".join(str(i) for i in trace.ids[:MAX_CHIPS])
    st.caption(t("tokenization.model.ids", ids=ids))
    per_line = line_costs(text, tokenizer.encode)
    if len(per_line) > 1:
        st.markdown(f"**{t('tokenization.model.per_line')}**")
        lines_text = [line for line in text.split("\n") if line.strip()]
        st.markdown(markdown_table(
            [t(f"tokenization.model.{k}") for k in ("line_text", "chars", "tokens", "chars_per_token")],
            [[line, c.chars, c.tokens, f"{c.chars_per_token:.2f}"] for line, c in zip(lines_text, per_line)]))
    quirk = next((q for q in QUIRKS if t(f"tokenization.quirk.{q}.text") == text), None)
    if quirk:
        quirk_note(quirk, tokenizer, text)


def vocab_explainer(loaded: Any, model_name: str) -> None:
    """Why the vocabulary's size matters: the embedding matrix it costs, ours and known models'."""
    st.subheader(t("tokenization.why.title"))
    st.markdown(t("tokenization.why.body"))
    vocab_size, d_model = loaded.tokenizer.vocab_size, loaded.config.d_model
    params = embedding_matrix_params(vocab_size, d_model)
    total = loaded.model.num_params()
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(t("tokenization.why.vocab"), f"{vocab_size:,}")
    c2.metric(t("tokenization.why.d_model"), d_model)
    c3.metric(t("tokenization.why.embedding"), f"{params:,}")
    c4.metric(t("tokenization.why.share"), f"{params / total:.0%}")
    st.caption(t("tokenization.why.ours", vocab=f"{vocab_size:,}", d=d_model, params=f"{params:,}",
                 total=f"{total:,}"))
    rows = [(t("tokenization.why.our_model", name=model_name), vocab_size, d_model, params)]
    rows += [(k.name, k.vocab_size, k.d_model, k.embedding_params) for k in KNOWN_VOCABULARIES]
    st.markdown(markdown_table(
        [t(f"tokenization.why.{k}") for k in ("model", "vocab", "d_model", "embedding")],
        [[name, f"{vocab:,}", d, f"{embedding:,}"] for name, vocab, d, embedding in rows]))


@st.fragment
def model_section(model_name: str, prompt: str) -> None:
    """The model's tokenizer on any text: a quirk button or an edit reruns only this."""
    model_tokens(get_model(model_name), prompt)


def model_part(page: Page) -> None:
    """Part 2's intro and its sections (or why the model cannot be loaded)."""
    st.markdown(t("tokenization.model.intro"))
    try:
        loaded_model = get_model(page.model_name)
    except (CheckpointError, KeyError, FileNotFoundError, ValueError) as missing:  # KeyError: an unknown name
        st.error(checkpoint_message(missing, page.model_name))
        loaded_model = None
    if loaded_model is not None:
        model_section(page.model_name, page.prompt)
        vocab_explainer(loaded_model, page.model_name)
