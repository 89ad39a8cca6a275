"""The one place that declares every durable value, its type and its allowed set or range.

Streamlit drops a widget's own state when the student changes page, and a modified client can
put any value into a widget (or call its ``on_change`` with a value no option offers). So every
value that must outlive a page change — the sidebar's language, prompt, model and seed AND each
page's own main controls — is declared here once as a ``Spec``: its default, a ``check`` that
turns an incoming value into a clean one or raises, and whether it travels in the view's link.

- ``bind(name)`` copies the durable value into the widget's key before the widget is drawn
  (checked first) and returns the keyword arguments ``key=`` and ``on_change=`` for the widget;
  the ``on_change`` callback (``commit``) checks the widget's value and writes it back.
- A value that fails its check falls back to the default with a translated note (a toast in
  the page's language), never a KeyError/ValueError. A value that is valid in general but does
  not fit *now* (layer 5 after switching to a 4-layer model) is adapted silently: that is a
  normal consequence of another choice, not tampering.
- ``read_url`` (once per session) takes values from ``st.query_params``; ``sync_url`` writes
  the page's non-default values back, so the browser's address is always a link to the view.

Example: ``st.selectbox(label, options, **state.bind("mha_layer", options=range(n_layer)))``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import streamlit as st

from ui.i18n import LANGUAGES, current_language, language_from_locale, translate

LANG: Final = "lang"
PROMPT: Final = "prompt"
MODEL: Final = "model"
SEED: Final = "seed"
PRESENTER: Final = "presenter"  # larger chart fonts for a projector (ui.charts.common reads it)

DEFAULT_PROMPTS: Final[dict[str, str]] = {"en": "The capital of France is", "zh": "法国的首都是"}
DEFAULT_PROMPT: Final = DEFAULT_PROMPTS["en"]
MAX_SEED: Final = 2**31 - 1
MAX_PROMPT_CHARS: Final = 20_000  # the prompt's own checks (core.engine.prompt) refuse long text with a message
PAGE_KEY_PREFIX: Final = "kept."  # durable copies of page controls: "kept.<widget key>"

_NOTES: Final = "_state_notes"  # translated notes waiting to be shown
_URL_READ: Final = "_state_url_read"
_LIMITS: Final = "_state_limits"  # the current dynamic limit of each bound name (for on_change)
_DEFAULTS: Final = "_state_defaults"  # the effective default of each bound name (for the URL)
_PAGE: Final = "_state_page"
# What the address bar was last made to carry: (page id, {name: (value, default)} of every value
# in it, the parameters). ``bind`` redoes the sync only when its own value or default moved.
_SYNCED: Final = "_state_url_synced"
# Parameters the address carries besides the view (a student's class code: ui.classroom); never
# the teacher key, which is read once and dropped.
LINK_EXTRA: Final = "_state_link_extra"
_ADOPT: Final = "_state_adopt"  # {widget key: name} of widgets drawn with the browser's value (a reconnect)


class Invalid(ValueError):
    """A value outside its declared type, set or range."""


def available_model_names() -> tuple[str, ...]:
    """Every model a student may pick: the sidebar's list and the URL's allowed set.

    Foreign models join this list where they are registered (``ui.resources``); the built-in
    presets are always there. Session-scoped models (a built-in's training snapshot, a model
    trained live: ``ui.session_models``) are listed only for the session that asked for them.
    """
    try:
        from ui import resources, session_models

        names = getattr(resources, "available_model_names", None)
        if callable(names):
            found = tuple(session_models.visible(tuple(names())))
            if found:
                return found
    except Exception:  # a broken optional catalogue must not take the sidebar down
        pass
    from core import BUILTIN_PRESETS

    return tuple(BUILTIN_PRESETS)


# --- value checks --------------------------------------------------------------------------


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        raise Invalid("a flag is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value)
    raise Invalid("not a whole number")


def _as_float(value: Any) -> float:
    if isinstance(value, bool):
        raise Invalid("a flag is not a number")
    if isinstance(value, (int, float)):
        out = float(value)
    elif isinstance(value, str) and len(value) < 40:
        try:
            out = float(value)
        except ValueError as err:
            raise Invalid("not a number") from err
    else:
        raise Invalid("not a number")
    if not math.isfinite(out):
        raise Invalid("not finite")
    return out


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("1", "true", "True"):
        return True
    if value in ("0", "false", "False"):
        return False
    raise Invalid("not a flag")


@dataclass(frozen=True)
class Spec:
    """One durable value. ``check(value) -> clean value`` raises ``Invalid`` when it fails."""

    name: str
    default: Any  # a value, or a callable(lang) -> value for defaults that follow the language
    check: Callable[[Any], Any]
    pages: tuple[str, ...] | None = None  # None: the sidebar (every page); else the pages it belongs to
    url: bool = True
    label: str = "state.control"  # i18n key naming the control in the fallback note
    dump: Callable[[Any], str] = str
    parse: Callable[[str], Any] = lambda s: s
    durable: str = ""
    widget: str = ""

    def default_for(self, lang: str) -> Any:
        return self.default(lang) if callable(self.default) else self.default


SPECS: dict[str, Spec] = {}


def declare(spec: Spec) -> Spec:
    if spec.name in SPECS:
        raise ValueError(f"{spec.name} declared twice")
    durable = spec.durable or (spec.name if spec.pages is None else PAGE_KEY_PREFIX + spec.name)
    widget = spec.widget or (f"w_{spec.name}" if spec.pages is None else spec.name)
    spec = Spec(**{**spec.__dict__, "durable": durable, "widget": widget})
    SPECS[spec.name] = spec
    return spec


def choice(name: str, options: Iterable[Any] | Callable[[], Iterable[Any]], default: Any,
           pages: tuple[str, ...] | None, label: str = "state.control", url: bool = True) -> Spec:
    """A value from a fixed set (compared by value; from the URL by its text)."""

    def allowed() -> list[Any]:
        return list(options() if callable(options) else options)

    def check(value: Any) -> Any:
        for option in allowed():
            if type(option) is type(value) and option == value:
                return option
        raise Invalid("not among the options")

    def parse(text: str) -> Any:
        for option in allowed():
            if str(option) == text:
                return option
        raise Invalid("not among the options")

    return declare(Spec(name, default, check, pages, url, label, parse=parse))


def integer(name: str, low: int, high: int, default: int, pages: tuple[str, ...] | None,
            label: str = "state.control", step: int = 1, url: bool = True) -> Spec:
    """A whole number in [low, high] on the grid low, low + step, ..."""

    def check(value: Any) -> int:
        n = _as_int(value)
        if not low <= n <= high or (n - low) % step:
            raise Invalid("out of range")
        return n

    return declare(Spec(name, default, check, pages, url, label, parse=check))


def number(name: str, low: float, high: float, default: float, pages: tuple[str, ...] | None,
           label: str = "state.control", url: bool = True) -> Spec:
    def check(value: Any) -> float:
        x = _as_float(value)
        if not low <= x <= high:
            raise Invalid("out of range")
        return round(x, 6)

    return declare(Spec(name, default, check, pages, url, label, dump=lambda v: f"{v:g}", parse=check))


def flag(name: str, default: bool, pages: tuple[str, ...] | None, label: str = "state.control",
         url: bool = True) -> Spec:
    return declare(Spec(name, default, _as_bool, pages, url, label,
                        dump=lambda v: "1" if v else "0", parse=_as_bool))


def text(name: str, max_chars: int, default: Any, pages: tuple[str, ...] | None,
         label: str = "state.control", url: bool = True, cut: bool = False) -> Spec:
    """A text of at most ``max_chars``; with ``cut``, a longer one is cut there rather than refused
    (a pasted article: the page's own checks then say what is wrong with it, in its language)."""

    def check(value: Any) -> str:
        if isinstance(value, str) and cut:
            return value[:max_chars]
        if not isinstance(value, str) or len(value) > max_chars:
            raise Invalid("not a text of the allowed length")
        return value

    return declare(Spec(name, default, check, pages, url, label, parse=check))


def int_list(name: str, low: int, high: int, max_items: int, default: Any, pages: tuple[str, ...] | None,
             label: str = "state.control", url: bool = True) -> Spec:
    """A list of distinct whole numbers in [low, high] (a multiselect of indices)."""

    def check(value: Any) -> list[int]:
        if not isinstance(value, (list, tuple)) or len(value) > max_items:
            raise Invalid("not a short list")
        out = [_as_int(v) for v in value]
        if any(not low <= v <= high for v in out) or len(set(out)) != len(out):
            raise Invalid("out of range")
        return out

    def parse(s: str) -> list[int]:
        return check([p for p in s.split(",") if p] if s else [])

    return declare(Spec(name, default, check, pages, url, label,
                        dump=lambda v: ",".join(str(i) for i in v), parse=parse))


def as_json(name: str, check: Callable[[Any], Any], default: Any, pages: tuple[str, ...] | None,
            label: str = "state.control", url: bool = True, max_chars: int = 4000) -> Spec:
    """A small structured value (an edited table); in the link as compact JSON."""

    def parse(s: str) -> Any:
        if len(s) > max_chars:
            raise Invalid("too long")
        try:
            return check(json.loads(s))
        except (json.JSONDecodeError, RecursionError) as err:
            raise Invalid("not JSON") from err

    return declare(Spec(name, default, check, pages, url, label,
                        dump=lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":")), parse=parse))


# --- the declarations ------------------------------------------------------------------------
# Static checks say what could ever be valid; pages pass what fits now (``bind(options=...)``).

choice(LANG, lambda: tuple(LANGUAGES), "en", None, "sidebar.language")
text(PROMPT, MAX_PROMPT_CHARS, lambda lang: DEFAULT_PROMPTS.get(lang, DEFAULT_PROMPT), None, "sidebar.prompt", cut=True)
choice(MODEL, available_model_names, "classic", None, "sidebar.model")
integer(SEED, 0, MAX_SEED, 0, None, "sidebar.seed")
flag(PRESENTER, False, None, "sidebar.presenter")

_OUT = ("logits_sampling", "generation")
SAMPLING_DEFAULTS: Final[dict[str, Any]] = {
    "sampling_temperature": 1.0,
    "sampling_top_k": 0,
    "sampling_top_p": 1.0,
}
for _spec in (
    number("sampling_temperature", 0.0, 3.0, 1.0, _OUT, "logits_sampling.temperature"),
    integer("sampling_top_k", 0, 10_000_000, 0, _OUT, "logits_sampling.top_k"),
    number("sampling_top_p", 0.05, 1.0, 1.0, _OUT, "logits_sampling.top_p"),
):
    SPECS[_spec.name] = Spec(**{**_spec.__dict__, "durable": _spec.name, "widget": ""})


# Each page's main controls. Widget key = the name; durable key = "kept.<name>".
from core.lessons import attention_math as _am  # noqa: E402  (pure numpy: safe to import here)
from core.lessons import head_analysis as _ha  # noqa: E402
from core.lessons.kv_memory import DTYPE_BITS as _DTYPES  # noqa: E402
from core.lessons.kv_memory import MODEL_PRESETS as _KV_PRESETS  # noqa: E402

LIVE_MODEL_PRESET: Final = "__live__"  # the KV calculator's entry for the model running in this app
MAX_LAYERS: Final = 256  # more than any model the app loads; what fits now is the model's own count
MAX_HEADS: Final = 256
MAX_TOKENS: Final = 1_000_000

_P = ("positional_encoding",)
integer("pe_d_model", 4, 512, 8, _P, "positional_encoding.sin.d_model", step=2)
integer("pe_positions", 2, 256, 64, _P, "positional_encoding.sin.positions")
choice("pe_base", (100, 1000, 10000, 100000, 500000, 1000000), 10000, _P, "positional_encoding.sin.base")
int_list("pe_pairs", 0, 255, 4, None, _P, "positional_encoding.sin.pairs")
integer("pe_position", 0, 100_000, 3, _P, "positional_encoding.vec.position")
integer("pe_offset", -1000, 1000, 2, _P, "positional_encoding.rel.offset")
integer("pe_rope_layer", 0, MAX_LAYERS, 0, _P, "positional_encoding.rope.layer")
integer("pe_rope_head", 0, MAX_HEADS, 0, _P, "positional_encoding.rope.head")
integer("pe_rope_m", 0, MAX_TOKENS, 5, _P, "positional_encoding.rope.m")
integer("pe_rope_n", 0, MAX_TOKENS, 2, _P, "positional_encoding.rope.n")
int_list("pe_rope_pairs", 0, 4095, 4, None, _P, "positional_encoding.rope.pairs")

_M = ("multi_head_attention",)
integer("mha_layer", 0, MAX_LAYERS, 0, _M, "multi_head_attention.layer")
integer("mha_head", 0, MAX_HEADS, 0, _M, "multi_head_attention.head")
flag("mha_scores", False, _M, "multi_head_attention.show_scores")
flag("mha_grid", True, _M, "multi_head_attention.grid.show")
integer("mha_query", 0, MAX_TOKENS, 0, _M, "multi_head_attention.view.query")
choice("mha_coref", tuple(p.key for p in _ha.COREF_PAIRS), _ha.COREF_PAIRS[0].key, _M,
       "multi_head_attention.coref.pair")

_S = ("self_attention",)
choice("sa_source", ("seeds", "seeds_as_written", "random"), "seeds", _S, "self_attention.source")
text("sa_tokens", 120, "", _S, "self_attention.edit.tokens")
for _key in ("sa_x", "sa_wq", "sa_wk", "sa_wv"):
    text(_key, 2000, "", _S, "state.self_attention.matrices")
flag("sa_scale", False, _S, "self_attention.scale")
flag("sa_mask", False, _S, "self_attention.mask")
integer("sa_query", 0, _am.MAX_TOKENS - 1, 0, _S, "self_attention.query")
choice("sa_lab_case", tuple(name for name, _, _ in _am.SEED_SOFTMAX_CASES), "row0", _S, "self_attention.lab.case")
text("sa_lab_scores", 300, "", _S, "self_attention.lab.scores")
choice("sa_tab", ("steps", "lab", "dk", "mh"), "steps", _S, "self_attention.tab.steps")  # the open tab
integer("sa_dk", 2, 512, 128, _S, "self_attention.dk.slider")
integer("sa_mh_heads", 1, 64, 2, _S, "self_attention.mh.heads")
flag("sa_mh_scale", True, _S, "self_attention.scale")
flag("sa_mh_mask", False, _S, "self_attention.mask")

_E = ("embeddings",)
EMBEDDINGS_LAB_DIMS: Final = 3
EMBEDDINGS_LAB_ROWS: Final = 3
EMBEDDINGS_LAB_LIMIT: Final = 1e6
EMBEDDINGS_LAB_SEEDS: Final = (("embeddings.word.apple", (0.8, 0.2, 0.1)), ("embeddings.word.banana", (0.7, 0.3, 0.1)),
                               ("embeddings.word.plane", (0.1, 0.8, 0.8)))


def _lab_rows(value: Any) -> list[list[Any]]:
    """The similarity lab's table: three rows of [word (≤ 20 chars), three finite numbers ≤ 1e6]."""
    if not isinstance(value, (list, tuple)) or len(value) != EMBEDDINGS_LAB_ROWS:
        raise Invalid("not the lab's table")
    out = []
    for row in value:
        if not isinstance(row, (list, tuple)) or len(row) != 1 + EMBEDDINGS_LAB_DIMS:
            raise Invalid("not a row of the lab's table")
        word = row[0]
        if not isinstance(word, str) or len(word) > 20:
            raise Invalid("not a word")
        numbers = [_as_float(x) for x in row[1:]]
        if any(abs(x) > EMBEDDINGS_LAB_LIMIT for x in numbers):
            raise Invalid("too large")
        out.append([word, *numbers])
    return out


def _lab_default(lang: str) -> list[list[Any]]:
    return [[translate(key, lang), *values] for key, values in EMBEDDINGS_LAB_SEEDS]


as_json("embeddings_lab_rows", _lab_rows, _lab_default, _E, "state.embeddings.table")
flag("embeddings_lab_normalise", False, _E, "embeddings.lab.normalise")
integer("embeddings_nn_k", 3, 30, 10, _E, "embeddings.nn.k")
# the embedding map's display toggles, moved in the browser (space3d; flags: knob_state.ts holds numbers)
flag("embeddings_map_only", False, _E, "embeddings.map.only_categories")
flag("embeddings_map_fit_categories", False, _E, "embeddings.map.fit")
EMBEDDINGS_CONTEXT_PRESETS: Final = ("capital", "coref")  # ui.sections.embeddings.CONTEXT_PRESETS (a test checks)
choice("embeddings_context_preset", EMBEDDINGS_CONTEXT_PRESETS, "capital", _E, "embeddings.context.preset")
# The default is the chosen example's text (the page passes it); prompts as long as the fields allow.
for _part, _chars in (("a", 300), ("b", 300), ("word", 40)):
    text(f"embeddings_context_{_part}", _chars,
         lambda lang, part=_part: translate(f"embeddings.context.capital.{part}", lang), _E,
         f"embeddings.context.{'prompt_' + _part if _part != 'word' else 'word'}")

_L = ("logits_sampling",)
integer("logits_sampling_top_n", 5, 30, 10, _L, "logits_sampling.top_n")
integer("logits_sampling_n_samples", 1, 1000, 200, _L, "logits_sampling.n_samples")

_G = ("generation",)
integer("generation_max_new", 1, 64, 20, _G, "generation.max_new")
# How many tokens have been generated: with the prompt, model, seed and sampling knobs (all in
# the link) the steps are reproducible, so a link replays them and shows the same text.
integer("generation_steps", 0, 64, 0, _G, "generation.max_new")
choice("generation_kv_preset", (*_KV_PRESETS, LIVE_MODEL_PRESET), "llama4_scout_like", _G, "generation.memory.preset")
integer("generation_kv_layers", 1, 1000, 1, _G, "generation.memory.layers")
integer("generation_kv_heads", 1, 1024, 1, _G, "generation.memory.q_heads")
integer("generation_kv_kv_heads", 1, 1024, 1, _G, "generation.memory.kv_heads")
integer("generation_kv_head_dim", 1, 4096, 1, _G, "generation.memory.head_dim")
integer("generation_kv_tokens", 1, 10_000_000, 1, _G, "generation.memory.tokens")
integer("generation_kv_batch", 1, 4096, 1, _G, "generation.memory.batch")
choice("generation_kv_dtype", tuple(_DTYPES), "fp16", _G, "generation.memory.dtype")

_T = ("tokenization",)
choice("tok_mode", ("classic", "gpt"), "classic", _T, "tokenization.mode")
choice("tok_tab", ("bpe", "model"), "bpe", _T, "tokenization.tab.bpe")  # the open tab
integer("tok_num_merges", 1, 1000, 10, _T, "tokenization.num_merges")
integer("tok_merge_step", 0, 1000, 0, _T, "tokenization.step.slider")
text("tok_encode_word", 200, "lowest", _T, "tokenization.encode.input")
text("tok_corpus", 200_000, "", _T, "state.tok.corpus_text", url=False)  # too long for a link


def _text_or_none(value: Any) -> str | None:  # None: Part 2 follows the sidebar prompt
    if value is None:
        return None
    if isinstance(value, str):
        return value[:MAX_PROMPT_CHARS]  # as the sidebar prompt: cut, and the page says what is wrong
    raise Invalid("not a text")


declare(Spec("tok_model_text", None, _text_or_none, _T, False, "tokenization.model.text"))

_TB = ("transformer_block",)
TB_HEAD_STRIDE: Final = MAX_HEADS  # a head in the ablation list: layer * TB_HEAD_STRIDE + head (stable across models)
integer("tb_layer", 0, MAX_LAYERS, 0, _TB, "transformer_block.pick.layer")
integer("tb_token", 0, MAX_TOKENS, 0, _TB, "transformer_block.pick.token")  # the page passes the last token
integer("tb_dla_target", 0, 10_000_000, 0, _TB, "transformer_block.dla.target")
int_list("tb_ablate_heads", 0, MAX_LAYERS * TB_HEAD_STRIDE + MAX_HEADS, 4096, [], _TB, "transformer_block.ablate.heads")
int_list("tb_ablate_attn", 0, MAX_LAYERS, MAX_LAYERS, [], _TB, "transformer_block.ablate.attn")
int_list("tb_ablate_mlp", 0, MAX_LAYERS, MAX_LAYERS, [], _TB, "transformer_block.ablate.mlp")
int_list("tb_ablate_resid", 0, MAX_LAYERS, MAX_LAYERS, [], _TB, "transformer_block.ablate.resid")
integer("tb_grad_depth", 4, 96, 48, _TB, "transformer_block.grad.depth", step=4)
text("tb_norm_x", 300, "0.2, 8.5, -3.1, 1.4", _TB, "transformer_block.norm.x")
choice("tb_norm_which", ("ln1", "ln2"), "ln1", _TB, "transformer_block.norm.live.which")
number("tb_act_x", -5.0, 5.0, -3.0, _TB, "transformer_block.act.x_name")
number("tb_act_up", -2.0, 2.0, 1.0, _TB, "transformer_block.act.up")
integer("tb_kv_neuron", 0, 10_000_000, 0, _TB, "transformer_block.kv.neuron_name")  # the page passes the top neuron

_WM = ("whole_model",)
WM_OURS: Final = "__ours__"  # the calculator's entry for the model running in this app
from core.lessons.param_count import PRESETS as _ARCH_PRESETS  # noqa: E402  (pure python: safe to import here)

choice("wm_preset", (WM_OURS, *_ARCH_PRESETS), WM_OURS, _WM, "whole_model.calc.preset")
# The calculator's fields: the page passes the chosen preset's values as the defaults.
for _key, _high in (("vocab", 10_000_000), ("d_model", 1_000_000), ("n_layer", 1000), ("n_ctx", 1_000_000),
                    ("n_head", 4096), ("n_kv_head", 4096), ("d_ff", 4_000_000), ("n_experts", 4096),
                    ("n_active", 4096)):
    integer(f"wm_{_key}", 1, _high, 1, _WM, f"whole_model.field.{_key}")
choice("wm_positional", ("learned", "sinusoidal", "rope"), "learned", _WM, "whole_model.field.positional")
choice("wm_norm", ("layernorm", "rmsnorm"), "layernorm", _WM, "whole_model.field.norm")
choice("wm_ffn", ("gelu", "swiglu"), "gelu", _WM, "whole_model.field.ffn")
flag("wm_tied", True, _WM, "whole_model.field.tied")
flag("wm_bias", True, _WM, "whole_model.field.bias")


# --- reading and writing ------------------------------------------------------------------------


def _lang() -> str:
    lang = st.session_state.get(LANG)
    return lang if isinstance(lang, str) and lang in LANGUAGES else "en"


def _browser_locale() -> str | None:
    try:
        return st.context.locale
    except Exception:  # AppTest and very old browsers have no locale
        return None


def note(label_key: str) -> None:
    """Queue the translated fallback note for one control (shown by ``show_notes``)."""
    notes: list[str] = st.session_state.setdefault(_NOTES, [])
    if label_key not in notes:
        notes.append(label_key)


def show_notes() -> None:
    """Show (once) each queued fallback note as a toast in the page's language."""
    notes = st.session_state.pop(_NOTES, None)
    if not notes:
        return
    lang = current_language()
    for label_key in notes:
        st.toast(translate("state.reset", lang, control=translate(label_key, lang)), icon="↩️", duration="long")


def _clean(spec: Spec, value: Any) -> tuple[Any, bool]:
    """The checked value and whether it passed (else the default)."""
    try:
        return spec.check(value), True
    except (Invalid, TypeError, ValueError, OverflowError):
        return spec.default_for(_lang()), False


def init() -> None:
    """Fill in missing sidebar keys with their defaults (language from the browser) and check
    every sidebar value already there (a crafted session or link falls back with a note)."""
    _init()


def _ensure_init() -> None:
    """``init`` unless this session's sidebar values are already there: every full run checks
    them first (``ui.page``), and afterwards only our own checked writes change them."""
    if LANG not in st.session_state:
        init()


def _init() -> None:
    if LANG not in st.session_state:
        st.session_state[LANG] = language_from_locale(_browser_locale())
    for spec in SPECS.values():
        if spec.pages is not None:
            continue
        if spec.durable not in st.session_state:
            st.session_state[spec.durable] = spec.default_for(_lang())
            continue
        current = st.session_state[spec.durable]
        value, ok = _clean(spec, current)
        if not ok:
            note(spec.label)
        if not ok or value is not current:  # a write per value per call costs more than the check
            st.session_state[spec.durable] = value


_UNSET: Final = object()


def get(key: str, default: Any = _UNSET) -> Any:
    """A durable value, checked (a page control's value by its declared name).

    ``default`` (when given) replaces the declared default, as in ``bind``.
    """
    spec = SPECS[key]
    if spec.pages is None:
        _ensure_init()
    _adopt_drawn()
    fallback = _effective_default(spec) if default is _UNSET else default
    if spec.durable not in st.session_state:
        return fallback
    value, ok = _clean(spec, st.session_state[spec.durable])
    if not ok:
        note(spec.label)
        value = fallback
        st.session_state[spec.durable] = value
    return value


def checked(key: str, value: Any) -> tuple[Any, bool]:
    """``value`` after ``key``'s declared check and whether it passed (if not: the default).

    For values that arrive outside a widget (a component's trigger: ``ui.components.knobs``).
    Example: checked("sampling_top_p", 2.0) -> (1.0, False)
    """
    return _clean(SPECS[key], value)


def put(key: str, value: Any) -> None:
    """Store a value the app itself computed (a preset's text, a loaded example)."""
    spec = SPECS.get(key)
    st.session_state[spec.durable if spec else key] = value
    st.session_state.pop(_SYNCED, None)  # the next bind or sync writes the address again


def durable_key(name: str) -> str:
    return SPECS[name].durable


def widget_key(key: str) -> str:
    spec = SPECS.get(key)
    return spec.widget if spec else f"w_{key}"


@dataclass(frozen=True)
class Limit:
    """What fits now: a set of options, or a numeric range (values outside are adapted)."""

    options: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    step: float | None = None
    items: tuple[Any, ...] | None = field(default=None)  # for lists: each item must be one of these


def _fit(value: Any, limit: Limit | None, default: Any) -> Any:
    """Adapt a generally valid value to what fits now (silently)."""
    if limit is None:
        return value
    if limit.items is not None:
        kept = [v for v in value if v in limit.items]
        return kept if kept or not value else list(default)
    if limit.options is not None:
        if value in limit.options:
            return value
        return default if default in limit.options else (limit.options[0] if limit.options else value)
    out = value
    if limit.low is not None and out < limit.low:
        out = type(value)(limit.low)
    if limit.high is not None and out > limit.high:
        out = type(value)(limit.high)
    if limit.step and limit.low is not None and isinstance(out, int):
        out -= int((out - limit.low) % limit.step)
    return out


def _effective_default(spec: Spec) -> Any:
    return st.session_state.get(_DEFAULTS, {}).get(spec.name, spec.default_for(_lang()))


def bind(name: str, *, widget: str | None = None, default: Any = None, options: Iterable[Any] | None = None,
         low: float | None = None, high: float | None = None, step: float | None = None,
         items: Iterable[Any] | None = None, then: Callable[..., None] | None = None,
         args: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Copy a durable value into its widget before drawing; returns ``key=`` and ``on_change=``.

    ``default`` overrides the declared default (one that depends on the page's data);
    ``options``/``low``/``high``/``step``/``items`` say what fits now; ``then(*args)`` runs after
    the checked value is stored (a page's own reaction to the change).
    """
    spec = SPECS[name]
    if spec.pages is None:
        _ensure_init()
    wkey = widget or spec.widget or name
    limit = None
    if any(x is not None for x in (options, low, high, items)):
        limit = Limit(tuple(options) if options is not None else None, low, high, step,
                      tuple(items) if items is not None else None)
    effective = spec.default_for(_lang()) if default is None else default
    st.session_state.setdefault(_LIMITS, {})[name] = limit
    previous = st.session_state.setdefault(_DEFAULTS, {}).get(name, _UNSET)
    st.session_state[_DEFAULTS][name] = effective
    if previous is not _UNSET and st.session_state.get(spec.durable, _UNSET) == previous != effective:
        st.session_state[spec.durable] = effective  # never chosen by the student: follow the new default
    if spec.durable in st.session_state:
        value, ok = _clean(spec, st.session_state[spec.durable])
        if not ok:
            note(spec.label)
            value = effective
    else:
        value = effective
    value = _fit(value, limit, _fit(effective, limit, effective) if limit else effective)
    _adopt_drawn()
    waiting, raw = _browser_value_waiting(wkey)
    if waiting:  # after a reconnect: the browser's value is the student's latest, not the link's
        adopted = _checked_browser_value(spec, raw, limit, _fit(effective, limit, effective))
        if adopted is _UNSET:  # a value only the widget can decode (a select's label): it decides
            st.session_state[spec.durable] = value
            st.session_state.pop(wkey, None)  # an earlier write would win over the browser's value
            st.session_state.setdefault(_ADOPT, {})[wkey] = name
            show_notes()
            return _widget_kwargs(name, wkey, then, args)
        value = adopted
    st.session_state[spec.durable] = value
    st.session_state[wkey] = value
    show_notes()
    _sync_url_if_moved(name, value, effective)
    return _widget_kwargs(name, wkey, then, args)


def _widget_kwargs(name: str, wkey: str, then: Callable[..., None] | None, args: tuple[Any, ...]) -> dict[str, Any]:
    save = commit(name, wkey)
    if then is None:
        return {"key": wkey, "on_change": save}

    def _save_then() -> None:
        save()
        then(*args)

    return {"key": wkey, "on_change": _save_then}


# --- a reconnect: the browser's value for a widget this session has not drawn yet -----------------


def _browser_value_waiting(wkey: str) -> tuple[bool, Any]:
    """(True, the value as the browser sent it) when the browser holds a value for widget ``wkey``
    that this session has not drawn yet; else (False, None).

    That happens after a reconnect to a restarted (or another) server: the browser sends its
    widgets' values with every rerun, but the new session's first run has not drawn them yet, so
    Streamlit keeps them undecoded (it needs the widget to decode them), out of
    ``st.session_state``, and runs no ``on_change`` for them. Writing the durable value into the
    widget's key would then undo the student's first change. Streamlit offers no public way to
    see such a value: this reads its widget store (checked against the real library by
    tests/app/test_reconnect_state.py); if that store changes shape, nothing is found and the
    durable value is used as before.
    """
    try:
        from streamlit.runtime.state.common import unpack_widget_state_value, user_key_from_element_id
        from streamlit.runtime.state.session_state import Serialized
        from streamlit.runtime.state.session_state_proxy import get_session_state

        widgets = get_session_state()._state._new_widget_state
        for widget_id, held in list(widgets.states.items()):
            if (isinstance(held, Serialized) and widget_id not in widgets.widget_metadata
                    and user_key_from_element_id(widget_id) == wkey):
                return True, unpack_widget_state_value(held.value)
    except Exception:  # outside a script run, or another Streamlit: no browser value to adopt
        return False, None
    return False, None


def _checked_browser_value(spec: Spec, raw: Any, limit: Limit | None, default: Any) -> Any:
    """The browser's raw widget value after ``spec``'s check and what fits now (a value no widget
    sends falls back to ``default`` with the usual note); ``_UNSET`` when only the widget can read
    it: a select or radio sends its option's label, a multiselect a list of labels."""
    candidates = [raw]
    if not isinstance(raw, (str, bytes)) and hasattr(raw, "__len__") and len(raw) == 1:
        candidates.append(list(raw)[0])  # a slider's single value travels as [x]
    for candidate in candidates:
        try:
            value = spec.check(candidate)
        except (Invalid, TypeError, ValueError, OverflowError):
            continue
        if limit is not None and limit.options is not None and value not in limit.options:
            break
        return _fit(value, limit, value)
    labels = [raw] if isinstance(raw, str) else list(raw) if hasattr(raw, "__iter__") else []
    if labels and all(isinstance(label, str) for label in labels):
        return _UNSET
    note(spec.label)
    return default


def _adopt_drawn() -> None:
    """Widgets left to the browser's value (see ``bind``) are drawn now: check and keep it."""
    waiting: dict[str, str] = st.session_state.get(_ADOPT) or {}
    for wkey, name in list(waiting.items()):
        try:
            st.session_state[wkey]
        except KeyError:
            continue  # not drawn yet
        del waiting[wkey]
        commit(name, wkey)()
        st.session_state.pop(_SYNCED, None)  # the address follows at the next sync


def bind_widget(key: str) -> str:
    """``bind`` for a sidebar widget drawn with its own ``on_change=commit(key)``; returns the key."""
    return bind(key)["key"]


def commit(key: str, widget: str | None = None) -> Callable[[], None]:
    """An ``on_change`` callback: check the widget's value and write it to the durable key."""
    spec = SPECS.get(key)

    def _commit() -> None:
        if spec is None:
            return
        wkey = widget or spec.widget
        try:
            sent = st.session_state[wkey]
        except KeyError:
            return
        except Exception:  # a crafted message the widget itself cannot decode: as any refused value
            sent = _UNSET
        value, ok = _clean(spec, sent)
        if ok:
            limit = st.session_state.get(_LIMITS, {}).get(key)
            effective = st.session_state.get(_DEFAULTS, {}).get(key, spec.default_for(_lang()))
            fitted = _fit(value, limit, effective)
            if limit is not None and limit.options is not None and value not in limit.options:
                ok = False  # an option the widget never offered: a crafted message
            value = fitted
        if not ok:
            note(spec.label)
            value = st.session_state.get(_DEFAULTS, {}).get(key, spec.default_for(_lang()))
        if key == LANG:
            _follow_language(st.session_state.get(LANG), value)
        st.session_state[spec.durable] = value

    return _commit


def _follow_language(old: Any, new: str) -> None:
    """Values still at the old language's default (the prompt, example tables) follow the new one."""
    if not isinstance(old, str) or old not in LANGUAGES or old == new:
        return
    for spec in SPECS.values():
        if callable(spec.default) and spec.durable in st.session_state:
            if st.session_state[spec.durable] == spec.default(old):
                st.session_state[spec.durable] = spec.default(new)
                st.session_state.get(_DEFAULTS, {}).pop(spec.name, None)


# Kept for the pages that bind the shared sampling knobs under their own widget keys.


def bind_clamped(durable: str, widget_key: str, clamp: tuple[float, float]) -> str:
    """Copy a shared sampling knob into a page's widget, clamped to that widget's range."""
    low, high = clamp
    return bind(durable, widget=widget_key, low=low, high=high)["key"]


def commit_to(durable: str, widget_key: str) -> Callable[[], None]:
    """An ``on_change`` callback writing a page widget's value back to a durable key."""
    return commit(durable, widget_key)


# --- the view as a link ---------------------------------------------------------------------------


_PAGE_SPECS: dict[tuple[str, int], tuple[Spec, ...]] = {}


def _page_specs(page_id: str) -> tuple[Spec, ...]:
    # SPECS only grows (pages declare theirs at import), so its size tells a stale entry.
    key = (page_id, len(SPECS))
    found = _PAGE_SPECS.get(key)
    if found is None:
        found = _PAGE_SPECS[key] = tuple(s for s in SPECS.values() if s.url and (s.pages is None or page_id in s.pages))
    return found


def read_url(page_id: str) -> None:
    """Once per session: take the link's values (checked) into the durable keys.

    A value that fails its check is dropped with a note, the default stays.
    """
    st.session_state[_PAGE] = page_id
    if st.session_state.get(_URL_READ):
        return
    st.session_state[_URL_READ] = True
    try:
        params = st.query_params.to_dict()
    except Exception:
        return
    # Any declared value is taken (each is checked): a link names the page it opens in its path.
    specs = {s.name: s for s in SPECS.values() if s.url}
    # The language first: the prompt's default depends on it.
    for name in sorted(params, key=lambda n: n != LANG):
        spec = specs.get(name)
        if spec is None:
            continue
        raw = params[name]
        try:
            if not isinstance(raw, str):
                raise Invalid("repeated")
            value = spec.check(spec.parse(raw))
        except (Invalid, TypeError, ValueError, OverflowError):
            note(spec.label)
            continue
        st.session_state[spec.durable] = value


def view_params(page_id: str) -> dict[str, str]:
    """The current page's non-default values as link parameters (defaults stay out)."""
    return _view(page_id)[1]


def _view(page_id: str) -> tuple[dict[str, tuple[Any, Any]], dict[str, str]]:
    """({name: (value, default)} of the page's link values, the link parameters)."""
    lang = _lang()
    seen: dict[str, tuple[Any, Any]] = {}
    out: dict[str, str] = {}
    defaults = st.session_state.get(_DEFAULTS, {})
    for spec in _page_specs(page_id):
        if spec.durable not in st.session_state:
            continue
        value = st.session_state[spec.durable]
        default = defaults.get(spec.name, spec.default_for(lang)) if spec.pages is not None else spec.default_for(lang)
        seen[spec.name] = (value, default)
        if value == default:
            continue
        try:
            out[spec.name] = spec.dump(value)
        except (TypeError, ValueError):
            continue
    return seen, out


def sync_url() -> None:
    """Make the browser's address carry this view (only when it changed)."""
    _adopt_drawn()
    page_id = st.session_state.get(_PAGE)
    if page_id is None:
        return
    seen, wanted = _view(page_id)
    wanted = {**wanted, **st.session_state.get(LINK_EXTRA, {})}
    try:
        if st.query_params.to_dict() != wanted:
            st.query_params.from_dict(wanted)
    except Exception:  # outside a script run (a test calling a helper)
        return
    st.session_state[_SYNCED] = (page_id, seen, wanted)


def _sync_url_if_moved(name: str, value: Any, default: Any) -> None:
    """``sync_url`` after ``bind(name)``, skipped when nothing the address carries has moved.

    ``bind`` changes only its own value and default; ``put`` (a value a page computed) clears
    the record, and ``setup`` syncs on every full run (a new language or prompt reruns the whole
    page; a page change or the browser's history can change the address itself).
    """
    record = st.session_state.get(_SYNCED)
    page_id = st.session_state.get(_PAGE)
    if record is None or record[0] != page_id:
        sync_url()
        return
    spec = SPECS[name]
    if not spec.url or (spec.pages is not None and page_id not in spec.pages):
        return  # not in this page's link
    shown_default = default if spec.pages is not None else spec.default_for(_lang())
    if record[1].get(name, _UNSET) != (value, shown_default):
        sync_url()
