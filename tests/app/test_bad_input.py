"""[W2-E] The bad-input catalogue: what a student's browser (or a modified client) can send.

Each case puts one bad input into one page in one language — through a widget, directly into
session state, or as a crafted widget message carrying a value no option offers — and checks:

1. no exception block;
2. where a message is due, it is there *in the page's language* (the zh string in zh mode,
   with no English detail from the core);
3. the page works again once the input is put back (no exception, no warning or error).

One AppTest per (page, language) is shared by the cases (each case restores what it broke),
which keeps the ~90 cases at a few seconds per page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import json

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.state import SessionState
from streamlit.testing.v1 import AppTest

import core
from core.lessons import attention_math as am
from core.engine.prompt import clean_prompt
from tests.app.conftest import APP, assert_clean, spaces
from ui import nav, state
from ui.i18n import load_strings, translate

LANGS = ("en", "zh")
CLASSIC = core.load_builtin("classic")
N_CTX = CLASSIC.config.n_ctx
SEEDS_CORPUS = (nav.ROOT / "assets" / "bpe_presets" / "seeds.txt").read_text(encoding="utf-8").strip()
HELDOUT = (nav.ROOT / "assets" / "corpus" / "heldout.txt").read_text(encoding="utf-8")
PAGES = [p.page_id for _, pages in nav.existing_sections() for p in pages]


def prompt_of_tokens(n: int) -> str:
    """A corpus-like prompt of exactly ``n`` tokens of the classic model."""
    words = "The capital of France is Paris . 法国的首都是巴黎。 ".split(" ")
    text, i = "", 0
    while len(CLASSIC.tokenizer.encode(clean_prompt(text + words[i % len(words)] + " ").text)) <= n:
        text += words[i % len(words)] + " "
        i += 1
    while len(CLASSIC.tokenizer.encode(clean_prompt(text).text)) < n:
        text += "a"
    assert len(CLASSIC.tokenizer.encode(clean_prompt(text).text)) == n
    return text


FULL_PROMPT = prompt_of_tokens(N_CTX)  # exactly n_ctx tokens: cut to n_ctx − 1, 71+ tokens on Multi-head


# --- sharing one AppTest per (page, language) ------------------------------------------------

_OPEN: dict[tuple[str, str], AppTest] = {}


_BASELINE: dict[tuple[str, str], list[str]] = {}


def page(page_id: str, lang: str) -> AppTest:
    at = _OPEN.get((page_id, lang))
    if at is None:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["lang"] = lang
        at.run()
        if page_id != "overview":
            at.switch_page(nav.page_by_id(page_id).path)
            at.run()
        assert_clean(at)
        _OPEN[(page_id, lang)] = at
        _BASELINE[(page_id, lang)] = problems(at)
    return at


def problems(at: AppTest) -> list[str]:
    """Warnings and errors on the page (some pages always show one, e.g. a "this is a toy" note)."""
    return sorted(str(m.value) for m in (*at.warning, *at.error))


def run_with(at: AppTest, crafted: dict[str, Any]) -> AppTest:
    """Run once with widget messages as a modified client would send them: ``{widget key: value}``
    (a text as string_value, a number as int/double_value, a list as a slider's values), whatever
    the options are (Streamlit 1.67 hands such a value to on_change)."""
    states = at._tree.get_widget_states()
    ids = {}
    for key in crafted:
        found = [w.id for w in states.widgets if w.id.endswith("-" + key)]
        found += [n.proto.id for n in _walk(at._tree) if str(getattr(getattr(n, "proto", None), "id", "")).endswith("-" + key)]
        assert found, f"no widget {key!r} on the page"
        ids[key] = found[0]
    kept = [w for w in states.widgets if w.id not in ids.values()]
    del states.widgets[:]
    states.widgets.extend(kept)
    for key, value in crafted.items():
        ws = WidgetState()
        ws.id = ids[key]
        if isinstance(value, bool):
            ws.bool_value = value
        elif isinstance(value, int):
            ws.int_value = value
        elif isinstance(value, float):
            ws.double_value = value
        elif isinstance(value, list):  # a slider's values
            ws.double_array_value.data.extend(value)
        else:
            ws.string_value = value
        states.widgets.append(ws)
    return at._run(states)


def _walk(node: Any):
    """Every element of the tree (AppTest has no class for some widgets, e.g. st.data_editor)."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def state_and_message(key: str, value: str) -> Callable[[AppTest], AppTest]:
    """The value put straight into the widget's session state *and* sent as its widget message
    (so ``on_change`` sees it): both ways a modified client can reach the page."""

    def apply(at: AppTest) -> AppTest:
        widget = next(w for w in _walk(at._tree) if getattr(w, "key", None) == key)

        class Crafted(type(widget)):  # what this widget reports for the next run: the raw value
            @property
            def _widget_state(self) -> WidgetState:
                ws = WidgetState()
                ws.id = self.id
                ws.string_value = value
                return ws

        widget.__class__ = Crafted
        at.session_state[key] = value
        return at.run()

    return apply


def messages(at: AppTest) -> list[str]:
    out = [m.value for kind in ("warning", "info", "error", "success") for m in getattr(at, kind)]
    out += [m.value for m in at.toast]  # ui.state's fallback notes are toasts
    return [str(m) for m in out]


def fragments(key: str, lang: str) -> list[str]:
    """The literal parts of a translated template (between its {placeholders}), longest first."""
    parts = [p.strip(" .。，,：:（）()“”") for p in re.split(r"\{[^}]*\}", load_strings(lang)[key])]
    return sorted((p for p in parts if len(p) >= 2), key=len, reverse=True)


def says(at: AppTest, keys: str | tuple[str, ...], lang: str) -> bool:
    """One of the page's messages is a translated ``key`` (its longest literal part is in it)."""
    keys = (keys,) if isinstance(keys, str) else keys
    return any(fragments(key, lang)[0] in m for key in keys for m in messages(at))


ASCII_WORDS = re.compile(r"[A-Za-z]{4,}(?: [A-Za-z]{2,}){2,}")  # three English words in a row


def assert_no_english_detail(at: AppTest) -> None:
    """zh mode: no message ends in an English explanation from the core."""
    for m in messages(at):
        m_plain = re.sub(r"`[^`]*`", "", m)  # code spans (file names, commands) are not prose
        assert not ASCII_WORDS.search(m_plain), m


# --- the cases --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    page: str
    apply: Callable[[AppTest], Any]  # put the bad input in (and run)
    restore: Callable[[AppTest], Any]  # put it back (and run)
    message: str | tuple[str, ...] | None = None  # i18n key(s) of the message that must show (one of them)
    langs: tuple[str, ...] = LANGS
    check: Callable[[AppTest, str], None] | None = None  # anything more that must hold
    marks: tuple = field(default=())


def durable(name: str) -> str:
    """Where a control's value lives between runs: its durable key if ``ui.state`` declares it."""
    return state.durable_key(name) if name in state.SPECS else name


def set_state(**values: Any) -> Callable[[AppTest], AppTest]:
    """Put values straight into session state (not only what the widgets allow), then run."""

    def apply(at: AppTest) -> AppTest:
        for key, value in values.items():
            at.session_state[durable(key)] = value
        return at.run()

    return apply


def prompt(text: Any) -> Callable[[AppTest], AppTest]:
    def apply(at: AppTest) -> AppTest:
        at.session_state["prompt"] = text
        return at.run()

    return apply


def default_prompt(at: AppTest) -> AppTest:
    at.session_state["prompt"] = "The capital of France is"
    return at.run()


def crafted(**values: Any) -> Callable[[AppTest], AppTest]:
    return lambda at: run_with(at, values)


def upload(name: str, data: bytes) -> Callable[[AppTest], AppTest]:
    return lambda at: at.file_uploader(key="tok_upload").set_value((name, data, "text/plain")).run()


def no_upload(at: AppTest) -> AppTest:
    return at.file_uploader(key="tok_upload").set_value(None).run()


def then(*steps: Callable[[AppTest], Any]) -> Callable[[AppTest], Any]:
    def apply(at: AppTest) -> Any:
        for step in steps:
            step(at)
        return at

    return apply


def no_raw_image_markdown(at: AppTest, _lang: str) -> None:
    """User text such as ``![](/e.png)`` reaches Markdown escaped (or in a code span, which is
    literal): it can never make an <img> or a link."""
    shown = [re.sub(r"(`+).*?\1", "", str(m.value))
             for m in [*at.markdown, *at.caption, *at.subheader, *at.info, *at.warning, *at.error]]
    assert not [s for s in shown if re.search(r"(?<!\\)!\[[^\]]*\]\(|(?<!\\)\[[^\]]*\]\(javascript", s)], shown


def corpus_is_seeds(at: AppTest, _lang: str) -> None:
    box = at.text_area(key="tok_corpus").value
    assert box == SEEDS_CORPUS
    assert HELDOUT[:200] not in box  # the crafted path did not read assets/corpus/heldout.txt


def corpus_is_cut(at: AppTest, _lang: str) -> None:
    assert len(at.session_state[durable("tok_corpus")]) <= 200_000  # never more than the box holds


def generation_can_step(at: AppTest, _lang: str) -> None:
    from tests.app.components import component_data

    actions = component_data(at, "generation_knobs")["actions"]  # Next token is a component button
    assert not next(a["disabled"] for a in actions if a["kind"] == "next")


def dtype_label_is_translated(at: AppTest, lang: str) -> None:
    from tests.app.components import component_data

    data = component_data(at, "generation_kv_calculator")  # the calculator is drawn in the browser
    assert {k["name"]: k["value"] for k in data["knobs"]}["generation_kv_dtype"] == "fp32"
    assert data["labels"]["dtype_option"] == translate("generation.memory.dtype_option", lang)  # filled in the browser


def w_stack_of_16(at: AppTest, _lang: str) -> None:
    assert not at.error, [e.value for e in at.error]


reload_seeds = set_state(  # the textbook example's numbers, as the page loads them
    sa_x=am.format_matrix(am.SEED_X), sa_wq=am.format_matrix(am.SEED_W_Q), sa_wk=am.format_matrix(am.SEED_W_K),
    sa_wv=am.format_matrix(am.SEED_W_V), sa_tokens=" ".join(am.SEED_TOKENS))
reset_lab = set_state(sa_lab_scores="2, 3, 3")


def lab_problem(code: str) -> Callable[[AppTest, str], None]:
    """The softmax lab explains its scores in the browser (tests/e2e/test_lesson_knobs.py checks the
    message there): the server sends the kept text as it is, and the same text is that problem."""

    def check(at: AppTest, _lang: str) -> None:
        from tests.app.lesson_components import lesson_components

        text = lesson_components(at)["sa_lab"]["knobs"]["sa_lab_scores"]
        with pytest.raises(am.InputProblem) as problem:
            am.softmax_steps(am.parse_vector(text))
        assert problem.value.code == code

    return check


X16 = "\n".join(" ".join(str((i + j) % 3) for j in range(16)) for i in range(3))
W16 = "\n".join(" ".join(str((i * j) % 2) for j in range(3)) for i in range(16))
MD_ATTACK = "![](/e.png) **bold** $x^2$ <img src=x onerror=alert(1)> [link](javascript:alert(1)) :red[x]"

CASES: list[Case] = []

# 1. The sidebar prompt on every page (every page draws the sidebar; model pages run it).
for pid in PAGES:
    CASES += [
        Case(f"prompt-n_ctx-tokens-{pid}", pid, prompt(FULL_PROMPT), default_prompt,
             message="prompt.truncated" if pid not in ("tokenization", "self_attention") else None),
        Case(f"prompt-markdown-{pid}", pid, prompt(MD_ATTACK), default_prompt, check=no_raw_image_markdown),
    ]
MODEL_PAGES = [p for p in PAGES if p not in ("tokenization", "self_attention")]
for i, pid in enumerate(MODEL_PAGES):
    CASES += [
        Case(f"prompt-empty-{pid}", pid, prompt(""), default_prompt, message="prompt.problem.empty"),
        Case(f"prompt-control-chars-{pid}", pid, prompt("\x00\x01\x02\x7f\x1b"), default_prompt,
             message="prompt.problem.empty", langs=(LANGS[i % 2],)),
        Case(f"prompt-too-long-{pid}", pid, prompt("x" * 5000), default_prompt, message="prompt.problem.too_long",
             langs=(LANGS[(i + 1) % 2],)),
    ]

# 2. Tokenization: the file-read hole, the corpus limits, uploads, crafted settings.
CASES += [
    Case("preset-path-traversal-heldout", "tokenization", crafted(tok_corpus_preset="../corpus/heldout"),
         lambda at: at, message="tokenization.preset.unknown", check=corpus_is_seeds),
    Case("preset-path-traversal-passwd", "tokenization", crafted(tok_corpus_preset="../../../../../../etc/passwd"),
         lambda at: at, message="tokenization.preset.unknown", check=corpus_is_seeds),
    # Set in state too, the message equals the state: no on_change runs and the page redraws the
    # box from its own allow-list (nothing to say, nothing read).
    Case("preset-state-and-message", "tokenization", state_and_message("tok_corpus_preset", "../corpus/train"),
         lambda at: at, check=corpus_is_seeds),
    Case("preset-absolute-path", "tokenization", crafted(tok_corpus_preset=str(nav.ROOT / "assets/corpus/heldout")),
         lambda at: at, message="tokenization.preset.unknown", check=corpus_is_seeds),
    Case("corpus-over-200k-chars", "tokenization", set_state(tok_corpus="ab" * 100_001),
         set_state(tok_corpus=SEEDS_CORPUS), message=("tokenization.corpus.cut", "state.reset"), check=corpus_is_cut),
    Case("corpus-at-the-200k-cut", "tokenization", set_state(tok_corpus="low lower " * 20_000),
         set_state(tok_corpus=SEEDS_CORPUS), message="tokenization.corpus.cut"),
    Case("corpus-empty", "tokenization", set_state(tok_corpus="   \n "),
         set_state(tok_corpus=SEEDS_CORPUS), message="tokenization.corpus.problem.empty"),
    Case("corpus-control-only", "tokenization", set_state(tok_corpus="\x00\x01\x02"),
         set_state(tok_corpus=SEEDS_CORPUS), message="tokenization.corpus.problem.empty"),
    Case("upload-binary", "tokenization", upload("b.txt", b"\x89PNG\r\n\x1a\n\x00\x00"), no_upload,
         message="tokenization.corpus.problem.binary"),
    Case("upload-latin1", "tokenization", upload("l.txt", b"caf\xe9 au lait"), no_upload,
         message="tokenization.corpus.problem.undecodable"),
    Case("upload-over-2mb", "tokenization", upload("big.txt", b"a " * (1024 * 1024 + 1)), no_upload,
         message="tokenization.corpus.problem.too_large"),
    Case("upload-markdown-file-name", "tokenization", upload("![](/e.png)**x**.txt", b"low lower lowest " * 5),
         no_upload, message="tokenization.upload.using", check=no_raw_image_markdown),
    Case("model-text-empty", "tokenization", set_state(tok_model_text=" "),
         set_state(tok_model_text=None), message="prompt.problem.empty"),
    Case("encode-word-markdown", "tokenization", set_state(tok_encode_word=MD_ATTACK[:200]),
         set_state(tok_encode_word="lowest"), check=no_raw_image_markdown),
]

RESET = "state.reset"  # a value no widget offers: the default, with the translated note

# 2b. [W3-F] #47: over-long text, wrong upload names, numbers no widget sends.
LONG_PASTE = "The capital of France is Paris. " * 800  # 25,600 characters


def no_reset_note(at: AppTest, lang: str) -> None:
    """Long text is answered by its own message, never by the "changed page" fallback note."""
    assert not says(at, "state.reset", lang), messages(at)


def prompt_box_holds(n: int) -> Callable[[AppTest, str], None]:
    def check(at: AppTest, lang: str) -> None:
        no_reset_note(at, lang)
        assert len(at.session_state["prompt"]) == n

    return check


def within(name: str, low: float, high: float) -> Callable[[AppTest, str], None]:
    """The kept value is one the control offers (however the crafted number was fitted or refused)."""

    def check(at: AppTest, _lang: str) -> None:
        try:
            value = at.session_state[durable(name)]
        except KeyError:
            return  # never stored: the declared default
        assert isinstance(value, (int, float)) and low <= value <= high, value

    return check


def model_text(text: Any) -> Callable[[AppTest], AppTest]:
    def apply(at: AppTest) -> AppTest:
        at.session_state[durable("tok_model_text")] = text
        return at.run()

    return apply


CASES += [
    # A paste beyond every limit: kept cut at the stored limit, refused by the prompt's own check.
    Case("prompt-paste-25k-chars", "logits_sampling", crafted(w_prompt=LONG_PASTE), default_prompt,
         message="prompt.problem.too_long", check=prompt_box_holds(state.MAX_PROMPT_CHARS)),
    Case("prompt-paste-25k-chars-tokenization", "tokenization", crafted(w_prompt=LONG_PASTE), default_prompt,
         check=prompt_box_holds(state.MAX_PROMPT_CHARS)),
    Case("prompt-state-25k-chars", "multi_head_attention", prompt(LONG_PASTE), default_prompt,
         message="prompt.problem.too_long", check=prompt_box_holds(state.MAX_PROMPT_CHARS)),
    Case("model-text-paste-25k-chars", "tokenization", crafted(tok_model_text=LONG_PASTE),
         set_state(tok_model_text=None), message="prompt.problem.too_long", check=no_reset_note),
    Case("model-text-state-25k-chars", "tokenization", model_text(LONG_PASTE), set_state(tok_model_text=None),
         message="prompt.problem.too_long", check=no_reset_note),
    Case("model-text-5k-chars", "tokenization", model_text("x" * 5000), set_state(tok_model_text=None),
         message="prompt.problem.too_long", check=no_reset_note),
    Case("upload-exe-name", "tokenization", upload("something.exe", b"low lower lowest " * 5), no_upload,
         message="tokenization.upload.wrong_type"),
    Case("upload-no-extension", "tokenization", upload("README", b"low lower lowest " * 5), no_upload,
         message="tokenization.upload.wrong_type"),
    Case("encode-word-crafted-long", "tokenization", crafted(tok_encode_word="w" * 50_000),
         set_state(tok_encode_word="lowest")),
    # (A NaN or infinity sent to a whole-number box is refused by Streamlit itself before the page
    # runs, with its own English error: a Streamlit limitation, not catchable in the page.)
    Case("merges-crafted-huge", "tokenization", crafted(tok_num_merges=10**18), set_state(tok_num_merges=10)),
    Case("merges-crafted-fraction", "tokenization", crafted(tok_num_merges=2.5), set_state(tok_num_merges=10)),
    Case("corpus-crafted-over-200k", "tokenization", crafted(tok_corpus="ab" * 150_000),
         set_state(tok_corpus=SEEDS_CORPUS), message="tokenization.corpus.cut", check=corpus_is_cut),
    # Sliders: Streamlit's own decoding fits a number into the slider's range; ui.state checks again.
    # (Logits' top-N and draws and the KV calculator answer in the browser: their values reach the
    # server only through a link or a component's action, checked in tests/app/test_logits_sampling.py,
    # tests/app/test_generation.py and tests/app/test_whole_model.py.)
    Case("dk-crafted-huge", "self_attention", crafted(sa_dk=[1e9]), set_state(sa_dk=64),
         check=within("sa_dk", 2, 512)),
    Case("dk-crafted-nan", "self_attention", crafted(sa_dk=[float("nan")]), set_state(sa_dk=64),
         check=within("sa_dk", 2, 512)),
    Case("grad-depth-crafted-inf", "transformer_block", crafted(tb_grad_depth=[float("inf")]),
         set_state(tb_grad_depth=12), check=within("tb_grad_depth", 4, 96)),
    Case("max-new-crafted-negative", "generation", crafted(generation_max_new=[-5.0]),
         set_state(generation_max_new=20), check=within("generation_max_new", 1, 64)),
    Case("seed-crafted-negative", "logits_sampling", crafted(w_seed=-5), set_state(seed=0),
         check=within("seed", 0, state.MAX_SEED)),
    Case("nn-k-crafted-huge", "embeddings", crafted(embeddings_nn_k=[1e9]), set_state(embeddings_nn_k=10),
         check=within("embeddings_nn_k", 3, 30)),
    Case("context-prompt-crafted-long", "embeddings", crafted(embeddings_context_a="z" * 50_000),
         lambda at: set_state(embeddings_context_a=translate("embeddings.context.capital.a", at.session_state["lang"]))(at)),
]

# 3. Self-attention: matrices and scores a student (or a client) can type.
CASES += [
    Case("sa-x-not-a-number", "self_attention", set_state(sa_x="1 0 abc 0"), reload_seeds,
         message="self_attention.problem.not_a_number"),
    Case("sa-x-too-large", "self_attention", set_state(sa_x="1e9 0 1 0\n0 1 0 1\n1 1 1 0"), reload_seeds,
         message="self_attention.problem.too_large"),
    Case("sa-x-too-many-rows", "self_attention", set_state(sa_x="\n".join(["1 0 1 0"] * 13)), reload_seeds,
         message="self_attention.problem.too_many"),
    Case("sa-x-ragged", "self_attention", set_state(sa_x="1 0 1 0\n0 1\n1 1 1 0"), reload_seeds,
         message="self_attention.problem.ragged"),
    Case("sa-x-nan", "self_attention", set_state(sa_x="nan 0 1 0\n0 1 0 1\n1 1 1 0"), reload_seeds,
         message="self_attention.problem.not_finite"),
    Case("sa-w-shape-mismatch", "self_attention", set_state(sa_wq="1 0\n0 1"), reload_seeds,
         message="self_attention.problem.shape"),
    Case("sa-w-16-rows-for-16-columns", "self_attention",
         set_state(sa_x=X16, sa_wq=W16, sa_wk=W16, sa_wv=W16, sa_tokens="a b c"), reload_seeds, check=w_stack_of_16),
    Case("sa-token-names-markdown", "self_attention", set_state(sa_tokens="![](/e.png) **b** $c$"), reload_seeds,
         check=no_raw_image_markdown),
    Case("sa-lab-all-masked", "self_attention", set_state(sa_lab_scores="-inf, −∞"), reset_lab,
         check=lab_problem("all_masked")),
    Case("sa-lab-empty", "self_attention", set_state(sa_lab_scores="[ ]"), reset_lab,
         check=lab_problem("empty")),
    Case("sa-lab-plus-inf", "self_attention", set_state(sa_lab_scores="1, inf"), reset_lab,
         check=lab_problem("not_finite")),
    Case("sa-lab-too-many", "self_attention", set_state(sa_lab_scores=", ".join(["1"] * 40)), reset_lab,
         check=lab_problem("too_many")),
]

# 4. Embeddings: the similarity lab's table, edited by a client that ignores the cell bounds.
LAB_WORD = "<word column>"


def lab_edit(edits: dict[int, dict[str, Any]]) -> Callable[[AppTest], AppTest]:
    def apply(at: AppTest) -> AppTest:
        lang = at.session_state["lang"]
        word = translate("embeddings.lab.col_word", lang)  # the table's columns are translated
        rows = {str(r): {(word if c == LAB_WORD else c): v for c, v in cells.items()} for r, cells in edits.items()}
        message = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
        return run_with(at, {f"embeddings_lab_vectors_{lang}": json.dumps(message)})

    return apply


def lab_reset(at: AppTest) -> AppTest:
    lang = at.session_state["lang"]
    at.session_state[durable("embeddings_lab_rows")] = [
        [translate(key, lang), *values] for key, values in state.EMBEDDINGS_LAB_SEEDS]
    return lab_edit({})(at)


def lab_names_escaped(at: AppTest, _lang: str) -> None:
    """The lab word reaches the 3-D arrows as the literal text typed (the browser writes it with
    fillText/textContent, never as markup), and nothing else in the drawing changes."""
    arrows = spaces(at)["embeddings_lab_arrows"]["arrows"]
    names = [a["name"] for a in arrows]
    assert "<b>x</b>%{y}" in names, names
    assert all(len(a["tip"]) == 3 for a in arrows)


CASES += [
    Case("lab-cell-beyond-1e6", "embeddings", lab_edit({0: {"x1": 5e6}}), lab_reset, message="embeddings.lab.too_large"),
    Case("lab-cell-minus-1e9", "embeddings", lab_edit({1: {"x3": -1e9}}), lab_reset, message="embeddings.lab.too_large"),
    Case("lab-zero-vector", "embeddings", lab_edit({2: {"x1": 0, "x2": 0, "x3": 0}}), lab_reset,
         message="embeddings.lab.zero_vector"),
    Case("lab-missing-cell", "embeddings", lab_edit({0: {"x2": None}}), lab_reset, message="embeddings.lab.missing_value"),
    Case("lab-cell-text", "embeddings", lab_edit({0: {"x2": "abc"}}), lab_reset, message="embeddings.lab.missing_value"),
    Case("lab-word-html-template", "embeddings", lab_edit({0: {LAB_WORD: "<b>x</b>%{y}"}}), lab_reset,
         check=lab_names_escaped),
    Case("lab-word-markdown", "embeddings", lab_edit({0: {LAB_WORD: "![](/e.png)"}, 1: {LAB_WORD: "**b**"}}), lab_reset,
         check=no_raw_image_markdown),
]

# 4b. [W3-F] #47: rows a fixed table never offers (a crafted message deletes or adds rows).


def lab_rows(deleted: list[int], added: list[dict[str, Any]]) -> Callable[[AppTest], AppTest]:
    def apply(at: AppTest) -> AppTest:
        lang = at.session_state["lang"]
        message = {"edited_rows": {}, "added_rows": added, "deleted_rows": deleted}
        return run_with(at, {f"embeddings_lab_vectors_{lang}": json.dumps(message)})

    return apply


def lab_unchanged(at: AppTest, _lang: str) -> None:
    """The kept table (the link's value) still has its three rows: the crafted rows never got in."""
    try:
        kept_rows = at.session_state[durable("embeddings_lab_rows")]
    except KeyError:
        return  # never edited: the declared three rows
    assert len(kept_rows) == state.EMBEDDINGS_LAB_ROWS


CASES += [
    Case("lab-every-row-deleted", "embeddings", lab_rows([0, 1, 2], []), lab_reset, message="embeddings.lab.rows_fixed",
         check=lab_unchanged),
    Case("lab-one-row-deleted", "embeddings", lab_rows([1], []), lab_reset, message="embeddings.lab.rows_fixed",
         check=lab_unchanged),
    Case("lab-rows-added", "embeddings", lab_rows([], [{"x1": 1, "x2": 2, "x3": 3}] * 50), lab_reset,
         message="embeddings.lab.rows_fixed", check=lab_unchanged),
    Case("lab-unknown-column", "embeddings", lab_edit({0: {"x9": 5}}), lambda at: at.run(),
         message="embeddings.lab.rows_fixed", check=lab_unchanged),
    Case("lab-row-out-of-table", "embeddings", lab_edit({99: {"x1": 5}}), lambda at: at.run(),
         message="embeddings.lab.rows_fixed", check=lab_unchanged),
    Case("lab-cell-nan-text", "embeddings", lab_edit({0: {"x1": "NaN"}}), lab_reset, message="embeddings.lab.missing_value"),
    Case("lab-word-too-long", "embeddings", lab_edit({0: {LAB_WORD: "w" * 5000}}), lab_reset),
]

# 5. Generation: a full context still generates ([W2-E] 4); the calculator in zh ([W2-E] 12).
CASES += [
    Case("gen-full-context-can-step", "generation", prompt(FULL_PROMPT), default_prompt,
         message="prompt.truncated", check=generation_can_step),
    Case("gen-dtype-stable-options", "generation", set_state(generation_kv_dtype="fp32"),
         set_state(generation_kv_dtype="fp16"), check=dtype_label_is_translated),
    Case("gen-kv-heads-not-dividing", "generation", set_state(generation_kv_heads=8, generation_kv_kv_heads=3),
         set_state(generation_kv_heads=12, generation_kv_kv_heads=12)),
]


# 6. Values no widget offers, straight into the durable state or as crafted widget messages
#    (the declared checks of ui.state: out of set/range -> default + a translated note).
CASES += [
    Case("model-name-path", "multi_head_attention", set_state(model="../../assets/models/classic"),
         set_state(model="classic"), message=RESET),
    Case("model-name-crafted-widget", "generation", crafted(w_model="gpt5"), lambda at: at),
    Case("language-unknown", "logits_sampling", set_state(lang="xx"), lambda at: at, message=RESET),
    Case("language-crafted-widget", "embeddings", crafted(w_lang="fr"), lambda at: at),
    Case("seed-negative", "logits_sampling", set_state(seed=-1), set_state(seed=0), message=RESET),
    Case("seed-not-a-number", "generation", set_state(seed="abc"), set_state(seed=0), message=RESET),
    Case("prompt-not-text", "multi_head_attention", set_state(prompt=12345), default_prompt,
         message=(RESET, "prompt.problem.binary")),
    Case("temperature-nan", "logits_sampling", set_state(sampling_temperature=float("nan")),
         set_state(sampling_temperature=1.0), message=RESET),
    Case("top-k-negative", "generation", set_state(sampling_top_k=-3), set_state(sampling_top_k=0), message=RESET),
    Case("top-p-zero", "logits_sampling", set_state(sampling_top_p=0.0), set_state(sampling_top_p=1.0), message=RESET),
    Case("pe-odd-d-model", "positional_encoding", set_state(pe_d_model=7), set_state(pe_d_model=8), message=RESET),
    Case("pe-position-huge", "positional_encoding", set_state(pe_position=10**12), set_state(pe_position=3),
         message=RESET),
    Case("mha-layer-out-of-model", "multi_head_attention", set_state(mha_layer=99), set_state(mha_layer=0)),
    Case("mha-head-negative", "multi_head_attention", set_state(mha_head=-1), set_state(mha_head=0), message=RESET),
    Case("merges-over-max", "tokenization", set_state(tok_num_merges=10**9), set_state(tok_num_merges=10),
         message=RESET),
    Case("bpe-mode-unknown", "tokenization", set_state(tok_mode="unigram"), set_state(tok_mode="classic"),
         message=RESET),
    Case("merge-step-text", "tokenization", set_state(tok_merge_step="9; rm -rf"), set_state(tok_merge_step=0),
         message=RESET),
    Case("sa-source-unknown", "self_attention", set_state(sa_source="../../x"), set_state(sa_source="seeds"),
         message=RESET),
    Case("sa-heads-not-dividing", "self_attention", set_state(sa_mh_heads=5), set_state(sa_mh_heads=2)),
]


# 7. A model whose files are broken: the message is in the page's language, names the file by its
#    path inside the app (never the server's absolute path) and the command that rebuilds it.
BROKEN = "test-broken-checkpoint"


def _broken_loader() -> Any:
    from core.engine.checkpoint import CheckpointMissingError

    missing = nav.ROOT / "assets" / "models" / "classic" / "nothing.safetensors"
    raise CheckpointMissingError(f"missing {missing}; rebuild it", path=missing, preset="classic")


def use_broken_model(at: AppTest) -> AppTest:
    from ui import resources

    if BROKEN not in resources.available_model_names():
        resources.register(BROKEN, _broken_loader)
    at.session_state[durable("model")] = BROKEN
    return at.run()


def no_server_path(at: AppTest, _lang: str) -> None:
    text = " ".join(messages(at))
    assert str(nav.ROOT) not in text and "assets/models/classic/nothing.safetensors" in text, text


for pid in ("embeddings", "multi_head_attention", "tokenization", "generation"):
    CASES.append(Case(f"model-files-broken-{pid}", pid, use_broken_model, set_state(model="classic"),
                      message="model.missing.file", check=no_server_path))


def _params() -> list[Any]:
    out = []
    for case in CASES:
        for lang in case.langs:
            out.append(pytest.param(case, lang, id=f"{case.name}-{lang}"))
    return out


@pytest.mark.parametrize(("case", "lang"), _params())
def test_bad_input(case: Case, lang: str) -> None:
    at = page(case.page, lang)
    case.apply(at)
    assert not at.exception, [e.value for e in at.exception]
    now = at.session_state["lang"]  # a refused language falls back to the default: check in that one
    if case.message is not None:
        assert says(at, case.message, now), (case.message, messages(at))
    if now == "zh":
        assert_no_english_detail(at)
    if case.check is not None:
        case.check(at, now)
    case.restore(at)
    if at.session_state["lang"] != lang:
        at.session_state["lang"] = lang
        at.run()
    assert_clean(at)
    assert problems(at) == _BASELINE[(case.page, lang)]  # back to how the page opened


def test_the_catalogue_is_large_enough() -> None:
    assert len(_params()) >= 60
    assert {c.page for c in CASES} == set(PAGES)


# --- a crafted clear-cache from one session ([W2-E] 5) -------------------------------------------


def test_crafted_clear_cache_from_one_session_does_not_unload_the_model_for_another() -> None:
    """A BackMsg{clear_cache} as any browser can send it, through Streamlit's own dispatch."""
    from ui import resources

    other = page("multi_head_attention", "en")
    model = resources.get_model("classic")
    sent = BackMsg()
    sent.clear_cache = True
    received = BackMsg.FromString(sent.SerializeToString())  # what arrives over the websocket
    session = SimpleNamespace(_session_state=SessionState())
    session._handle_clear_cache_request = lambda: AppSession._handle_clear_cache_request(session)
    session._handle_rerun_script_request = lambda *_: None
    AppSession.handle_backmsg(session, received)
    assert resources.get_model("classic") is model  # the same object: nothing reloaded
    from core.lessons import head_analysis as ha

    at = other.selectbox(key="mha_coref").set_value(ha.COREF_PAIRS[1].key).run()  # the other student's next click
    assert_clean(at)
    assert resources.get_model("classic") is model


def test_server_upload_ceiling_matches_the_page() -> None:
    """[W2-E] 8: server.maxUploadSize (MB) is the Tokenization page's own limit."""
    import tomllib

    from core.text.bpe_view import MAX_CORPUS_BYTES

    config = tomllib.loads((nav.ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] * 1024 * 1024 == MAX_CORPUS_BYTES
