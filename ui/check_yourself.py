"""The "check yourself" card at the end of every station page: predict first, then reveal.

The questions come from the class bank (``serving.classroom.bank``, the station's own) and, on
Logits, Self-attention and Generation, one *live* question first, built here from the numbers
the page shows for the current prompt and model and answered with core's functions
(``core.engine.sampling``, ``core.lessons.attention_math``, ``core.lessons.kv_memory``).

- ``card(page_id, live=None)`` draws it; a page calls it once, at its end.
- The card is an ``st.fragment``: a pick, "Reveal" or "Another question" reruns the card only
  (a few small elements), never the page's model run or charts. A browser component would save
  that small rerun but needs its own bundle, keyboard handling and announcements; Streamlit's
  radio group already has a label, arrow keys and focus, and its alerts carry
  ``role="status"`` / ``role="alert"``, so the reveal is announced.
- Durable: what was picked and revealed, and which question is shown, live in one checked
  value per station (``cy_<page>``, declared here with ``ui.state``, out of the link): they
  survive a page change. A live question's pick is kept with a signature of its text and
  options; when the page's numbers change, the old pick no longer applies and the card says so.
- Text from the student or the model (token labels, typed token names, a model's name) is
  escaped where it enters a question; the bank's own text is plain (no Markdown syntax: a test).
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import streamlit as st

from core.engine.sampling import apply_temperature, softmax
from core.lessons import attention_math as am
from core.lessons.kv_memory import format_bytes, kv_cache_memory
from serving.classroom.bank import STATIONS, bank
from ui import state
from ui.i18n import current_language, t
from ui.text import escape_markdown

LIVE_TEMPERATURE: Final = 0.2  # the textbook's "conservative" end: the top token gains visibly
FLAT_TEMPERATURE: Final = 2.0  # asked instead when the top token is already near certain
MAX_PICKS: Final = 64  # questions remembered per station (more than a station's bank holds)
MAX_AT: Final = 63


@dataclass(frozen=True)
class CardQuestion:
    """One question as the card shows it (already in the page's language)."""

    qid: str  # a bank id, or "live.<page>"
    text: str  # Markdown, shown as written: the bank's text is plain (a test checks), user parts arrive escaped
    options: tuple[str, ...]  # plain text (escaped when drawn)
    correct: int
    explanation: str  # Markdown, like ``text``
    live: bool = False

    @property
    def signature(self) -> str:
        """Changes whenever the text or the options change (a live question on new numbers)."""
        joined = "\x1f".join((self.text, *self.options))
        return f"{zlib.crc32(joined.encode('utf-8')):08x}"


# --- the durable value: {"at": i, "picks": {qid: [option, revealed, signature]}} --------------


def _check_card_state(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"at", "picks"}:
        raise state.Invalid("not a card state")
    at, picks = value.get("at", 0), value.get("picks", {})
    if type(at) is not int or not 0 <= at <= MAX_AT or not isinstance(picks, dict) or len(picks) > MAX_PICKS:
        raise state.Invalid("not a card state")
    clean: dict[str, list[Any]] = {}
    for qid, pick in picks.items():
        if (not isinstance(qid, str) or len(qid) > 64 or not isinstance(pick, list) or len(pick) != 3
                or type(pick[0]) is not int or not 0 <= pick[0] < 6 or type(pick[1]) is not bool
                or not isinstance(pick[2], str) or len(pick[2]) != 8):
            raise state.Invalid("not a pick")
        clean[qid] = list(pick)
    return {"at": at, "picks": clean}


def _spec_name(page_id: str) -> str:
    return f"cy_{page_id}"


for _page in STATIONS:
    if _spec_name(_page) not in state.SPECS:
        state.as_json(_spec_name(_page), _check_card_state, {"at": 0, "picks": {}}, (_page,),
                      "check_yourself.title", url=False)


def _load(page_id: str) -> dict[str, Any]:
    value = state.get(_spec_name(page_id))
    return {"at": value["at"], "picks": {k: list(v) for k, v in value["picks"].items()}}


def _save(page_id: str, value: dict[str, Any]) -> None:
    state.put(_spec_name(page_id), _check_card_state(value))


# --- questions ------------------------------------------------------------------------------------


def bank_questions(page_id: str, lang: str) -> list[CardQuestion]:
    return [CardQuestion(q.qid, q.text, q.options, q.correct, q.explanation)
            for q in bank(lang).for_station(page_id)]


def _shuffled(qid: str, correct: str, wrong: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """The options in an order fixed by their text (the answer is not always first), and where
    the correct one landed. Options that read the same as the answer are dropped."""
    options = [correct, *dict.fromkeys(w for w in wrong if w != correct)]
    random.Random(zlib.crc32("\x1f".join((qid, *options)).encode("utf-8"))).shuffle(options)
    return tuple(options), options.index(correct)


def _digits(*values: float) -> int:
    """Enough decimals that the compared values read differently and none below 1 reads as
    1 (2, up to 4)."""
    for digits in (2, 3, 4):
        shown = [f"{v:.{digits}f}" for v in values]
        if len(set(shown)) == len(shown) and all(v >= 1 or s != f"{1:.{digits}f}" for v, s in zip(values, shown)):
            return digits
    return 4


def temperature_question(logits: np.ndarray, top_label: str) -> CardQuestion | None:
    """What temperature 0.2 (or 2, when at 0.2 the top token would be all but certain) does to the
    probability of the top token, answered with ``core.engine.sampling.apply_temperature``.

    None when the change is too small to tell apart (nothing to predict).
    """
    logits = np.asarray(logits, dtype=np.float64)
    top = int(np.argmax(logits))  # the first maximum: the lowest id among equals, as the page ranks
    p1 = float(softmax(logits)[top])
    temperature = LIVE_TEMPERATURE
    p_t = float(apply_temperature(logits, temperature)[top])
    if p_t >= 0.9999:  # would read as 1 at four decimals: ask what flattening does instead
        temperature = FLAT_TEMPERATURE
        p_t = float(apply_temperature(logits, temperature)[top])
    p_inverse = float(apply_temperature(logits, 1.0 / temperature)[top])  # multiplying by T instead
    if abs(p_t - p1) < 1e-4 or p_t >= 1.0:
        return None
    d = _digits(p1, p_t)
    sharpen = temperature < 1
    fmt = lambda p: f"{p:.{d}f}"  # noqa: E731
    correct = t("check_yourself.live.temp.up" if sharpen else "check_yourself.live.temp.down", p=fmt(p_t))
    inverse_shown = fmt(p_inverse) if d == _digits(p1, p_t, p_inverse) else f"{p_inverse:.4f}"
    if sharpen:
        inverse = t("check_yourself.live.temp.down", p=fmt(p_inverse))
    elif p_inverse < 1 and fmt(p_inverse) == fmt(1.0):  # multiplying would make it all but certain
        inverse = t("check_yourself.live.temp.nearly_one")
    else:
        inverse = t("check_yourself.live.temp.up", p=fmt(p_inverse))
    wrong = [
        inverse,
        t("check_yourself.live.temp.same", p=fmt(p1)),
        t("check_yourself.live.temp.one") if sharpen else t("check_yourself.live.temp.uniform", n=f"{logits.size:,}"),
    ]
    qid = "live.logits_sampling"
    options, index = _shuffled(qid, correct, wrong)
    return CardQuestion(
        qid, t("check_yourself.live.temp.text", token=escape_markdown(top_label), p=fmt(p1), t=f"{temperature:g}"),
        options, index,
        t("check_yourself.live.temp.explain", t=f"{temperature:g}", k=f"{1 / temperature:g}", token=escape_markdown(top_label),
          p1=fmt(p1), pt=fmt(p_t), inv=f"{1 / temperature:g}", pinv=inverse_shown),
        live=True,
    )


def kv_cache_question(n_tokens: int, n_layer: int, n_kv_head: int, d_head: int, model: str) -> CardQuestion | None:
    """How big the KV cache is after this prompt on this model (fp16), by ``kv_cache_memory``."""
    try:
        memory = kv_cache_memory(n_layer, n_kv_head, d_head, n_tokens, dtype="fp16")
    except ValueError:
        return None
    total = memory.total_bytes
    correct = format_bytes(total)
    wrong = [format_bytes(total // 2), format_bytes(memory.bytes_per_layer), format_bytes(2 * total)]
    qid = "live.generation"
    options, index = _shuffled(qid, correct, wrong)
    if len(options) < 3:
        return None
    return CardQuestion(
        qid, t("check_yourself.live.kv.text", n=n_tokens, model=escape_markdown(model), layers=n_layer, kv=n_kv_head,
               d=d_head),
        options, index,
        t("check_yourself.live.kv.explain", n=n_tokens, kv=n_kv_head, d=d_head, layers=n_layer,
          per_layer=format_bytes(memory.bytes_per_layer), total=correct,
          per_token=format_bytes(memory.bytes_per_token_per_layer * n_layer)),
        live=True,
    )


def attention_question(x: np.ndarray, w_q: np.ndarray, w_k: np.ndarray, w_v: np.ndarray,
                       tokens: Sequence[str]) -> CardQuestion | None:
    """The weight the first token gives itself after ÷√d_k and softmax (no mask), on the page's
    matrices, by ``core.lessons.attention_math.attention_steps``."""
    try:
        scaled = am.attention_steps(x, w_q, w_k, w_v, scale=True, causal=False)
    except (am.InputProblem, ValueError):
        return None
    n = scaled.weights.shape[0]
    if n < 2:
        return None
    d_k = scaled.d_k
    weight = float(scaled.weights[0, 0])
    unscaled = float(am.softmax(scaled.scores[0])[0])  # the same scores without ÷√d_k
    equal = 1.0 / n
    d = _digits(weight, unscaled, equal, 1.0)
    fmt = lambda v: f"{v:.{d}f}"  # noqa: E731
    wrong = [fmt(unscaled), fmt(equal), fmt(1.0)]
    qid = "live.self_attention"
    options, index = _shuffled(qid, fmt(weight), wrong)
    if len(options) < 3:
        return None
    row = ", ".join(f"{v:.3g}" for v in scaled.scores[0])
    token = escape_markdown(tokens[0])
    return CardQuestion(
        qid, t("check_yourself.live.attn.text", token=token, dk=d_k), options, index,
        t("check_yourself.live.attn.explain", token=token, scores=escape_markdown(f"[{row}]"), dk=d_k,
          sqrt=f"{math.sqrt(d_k):.3g}", w=fmt(weight), unscaled=fmt(unscaled), equal=fmt(equal)),
        live=True,
    )


# --- what the pages call ----------------------------------------------------------------------------


def logits_live(page: Any, logits: np.ndarray) -> CardQuestion | None:
    """The Logits page's live question: its own last-position logits, its own top token."""
    from ui.tokens import token_labels

    top = int(np.argmax(logits))  # the first maximum: the lowest id among equals
    return temperature_question(logits, token_labels(page.loaded.tokenizer, [top])[0])


def generation_live(page: Any) -> CardQuestion | None:
    """The Generation page's live question: this prompt's length on this model's attention."""
    cfg = page.config
    return kv_cache_question(len(page.run.ids), int(cfg.n_layer), int(cfg.n_kv_head), int(cfg.d_head), page.model_name)


def attention_live() -> CardQuestion | None:
    """The Self-attention page's live question, on the matrices its boxes hold now."""
    from ui.sections.self_attention import MATRIX_KEYS, clean_labels

    try:
        x, w_q, w_k, w_v = (am.parse_matrix(state.get(key), max_rows=am.MAX_TOKENS if key == "sa_x" else am.MAX_DIM)
                            for key in MATRIX_KEYS)
    except am.InputProblem:
        return None
    return attention_question(x, w_q, w_k, w_v, clean_labels(state.get("sa_tokens"), len(x)))


def card(page_id: str, live: CardQuestion | None = None) -> None:
    """The card for one station page (its bank questions, the live one first when given)."""
    questions = ([live] if live is not None else []) + bank_questions(page_id, current_language())
    if questions:
        _card(page_id, tuple(questions))


@st.fragment
def _card(page_id: str, questions: tuple[CardQuestion, ...]) -> None:
    saved = _load(page_id)
    at = saved["at"] % len(questions)
    question = questions[at]
    pick = saved["picks"].get(question.qid)
    changed = pick is not None and pick[2] != question.signature
    if changed or (pick is not None and pick[0] >= len(question.options)):
        pick = None
    chosen, revealed = (pick[0], pick[1]) if pick else (None, False)
    with st.container(border=True, key=f"cy_{page_id}_card"):
        st.subheader(t("check_yourself.title"), anchor=False)
        st.caption(t("check_yourself.intro") + " · " + t("check_yourself.progress", i=at + 1, n=len(questions))
                   + (" · " + t("check_yourself.live_badge") if question.live else ""))
        if changed:
            st.caption(t("check_yourself.changed"))
        if revealed and chosen is not None:
            _revealed(page_id, question, chosen)
        else:
            _predict(page_id, question, chosen)
        st.button(t("check_yourself.next"), key=f"cy_{page_id}_next", on_click=_on_next,
                  args=(page_id, at, len(questions)))


def _predict(page_id: str, question: CardQuestion, chosen: int | None) -> None:
    """The question as a radio group, and "Reveal" once something is picked."""
    widget = f"cy_{page_id}_pick_{question.qid}"
    st.session_state[widget] = chosen
    # The label is the radio group's accessible name as Streamlit sends it (unrendered), so it
    # carries no escapes of its own: bank text is plain, user parts came escaped.
    st.radio(question.text, options=range(len(question.options)), index=None, key=widget,
             format_func=lambda i: escape_markdown(question.options[i]),
             on_change=_on_pick, args=(page_id, question, widget))
    st.button(t("check_yourself.reveal"), key=f"cy_{page_id}_reveal", type="primary", disabled=chosen is None,
              help=None if chosen is not None else t("check_yourself.pick_first"),
              on_click=_on_reveal, args=(page_id, question))


def _revealed(page_id: str, question: CardQuestion, chosen: int) -> None:
    """The options as a list that says in words which is right and which was picked (a disabled
    radio group would grey them out below the contrast a reader needs), then the result."""
    st.markdown(f"**{question.text}**")
    lines = []
    for i, option in enumerate(question.options):
        marks = [t(key) for key, on in (("check_yourself.mark.correct", i == question.correct),
                                        ("check_yourself.mark.yours", i == chosen)) if on]
        lines.append(f"- {escape_markdown(option)}" + (f" — **{' · '.join(marks)}**" if marks else ""))
    st.markdown("\n".join(lines))
    if chosen == question.correct:
        st.success(t("check_yourself.correct") + " " + question.explanation, icon="✅")
    else:
        answer = escape_markdown(question.options[question.correct])
        st.warning(t("check_yourself.incorrect", answer=answer) + " " + question.explanation, icon="💡")
    st.button(t("check_yourself.again"), key=f"cy_{page_id}_again", on_click=_on_again, args=(page_id, question))


def _on_pick(page_id: str, question: CardQuestion, widget: str) -> None:
    value = st.session_state.get(widget)
    saved = _load(page_id)
    if type(value) is not int or not 0 <= value < len(question.options):
        saved["picks"].pop(question.qid, None)  # cleared, or a value no option offers
    else:  # a new prediction (the radio is only drawn before the reveal)
        saved["picks"][question.qid] = [value, False, question.signature]
    _save(page_id, _bounded(saved, question.qid))


def _on_reveal(page_id: str, question: CardQuestion) -> None:
    saved = _load(page_id)
    pick = saved["picks"].get(question.qid)
    if pick is not None and pick[2] == question.signature:  # predict first: nothing to reveal without a pick
        pick[1] = True
        _save(page_id, saved)


def _on_again(page_id: str, question: CardQuestion) -> None:
    saved = _load(page_id)
    saved["picks"].pop(question.qid, None)
    _save(page_id, saved)


def _on_next(page_id: str, at: int, count: int) -> None:
    saved = _load(page_id)
    saved["at"] = (at + 1) % count
    _save(page_id, saved)


def _bounded(saved: dict[str, Any], newest: str) -> dict[str, Any]:
    """Keep at most MAX_PICKS picks (the newest stays)."""
    picks = saved["picks"]
    while len(picks) > MAX_PICKS:
        oldest = next(k for k in picks if k != newest)
        picks.pop(oldest)
    return saved
