"""A question as text, and its result once revealed (the teacher's screen and every student's).

Every text a person typed (the teacher's question and options, students' answers, the prompt)
is shown through ``escape_markdown`` or as chart data: never as Markdown or HTML.
"""

from __future__ import annotations

import streamlit as st

from core.engine.checkpoint import CheckpointError
from core.engine.prompt import PromptProblem
from serving.models import UnknownModel
from serving.classroom.bank import LANGUAGES, BankQuestion, bank
from serving.classroom.rules import Question, Tally
from ui.charts.common import vega
from ui.classroom import charts, point, predict
from ui.i18n import current_language, t
from ui.text import escape_markdown, markdown_table


def bank_question(question: Question) -> BankQuestion | None:
    """A bank question in this screen's language (None for a typed one, or an id the bank lacks)."""
    if question.kind != "choice" or "bank_id" not in question.spec:
        return None
    lang = current_language()
    try:
        found = bank(lang if lang in LANGUAGES else LANGUAGES[0]).question(str(question.spec["bank_id"]))
    except KeyError:
        return None
    return found if len(found.options) == question.spec.get("options") else None


def question_text(question: Question) -> str:
    """The question as one line of (escaped) Markdown, in this screen's language."""
    if question.kind == "next_token":
        prompt = str(question.spec.get("prompt", ""))
        shown = prompt if len(prompt) <= 160 else "…" + prompt[-159:]
        return t("classroom.q.next_token", prompt=escape_markdown(shown))
    if question.kind == "choice" and "text" in question.spec:
        return escape_markdown(question.spec["text"])
    from_bank = bank_question(question)
    if from_bank is not None:
        return escape_markdown(from_bank.text)
    if question.kind == "point":
        typed = question.spec.get("text")
        return escape_markdown(typed) if typed else point.default_text(question)
    return t("classroom.q.unsupported")


def option_labels(question: Question) -> list[str]:
    """A multiple-choice question's options as plain text: as typed, or the bank's in this screen's
    language (escape them where Markdown shows them)."""
    if "labels" in question.spec:
        return [str(label) for label in question.spec.get("labels") or []]
    from_bank = bank_question(question)
    return list(from_bank.options) if from_bank is not None else []


def _correct_and_why(question: Question) -> tuple[int | None, str]:
    """The right option (None for a poll) and the explanation ("" when none), as plain text."""
    from_bank = bank_question(question)
    if from_bank is not None:
        return from_bank.correct, from_bank.explanation
    correct = question.spec.get("correct")
    return (correct if isinstance(correct, int) else None), str(question.spec.get("explanation") or "")


def show_result(question: Question, tally: Tally, key: str) -> None:
    """The revealed result: the histogram and its numbers, by kind."""
    st.markdown(f"**{t('classroom.reveal.title', n=tally.total)}**")
    if question.kind == "next_token":
        _next_token_result(question, tally, key)
    elif question.kind == "choice" and option_labels(question):
        _choice_result(question, tally, key)
    elif question.kind == "point":
        point.show_result(question, tally, key)
    else:
        _counts_table(tally)


def _next_token_result(question: Question, tally: Tally, key: str) -> None:
    model, prompt = str(question.spec["model"]), str(question.spec["prompt"])
    try:
        rows, top = predict.reveal_rows(model, prompt, tally)
    except (PromptProblem, CheckpointError, UnknownModel):  # a model that cannot run now: the counts still show
        st.warning(t("classroom.reveal.no_model"))
        _counts_table(tally)
        return
    spec = charts.share_chart(
        [(r.answer, r.share, r.model) for r in rows], title=t("classroom.reveal.chart_title"),
        x_title=t("classroom.reveal.x"), y_title=t("classroom.reveal.answer"), series_title=t("classroom.reveal.who"),
        class_label=t("classroom.reveal.class"), model_label=t("classroom.reveal.model"),
        no_token=t("classroom.reveal.no_token"))
    vega(spec, width="stretch", key=f"{key}_chart")
    best, best_p = top[0] if top else ("", 0.0)
    st.markdown(t("classroom.reveal.model_says", token=escape_markdown(best), p=f"{best_p:.1%}"))
    st.markdown(markdown_table([t("classroom.reveal.rank"), t("classroom.reveal.answer"), t("classroom.reveal.model")],
                               [[i + 1, text, f"{p:.1%}"] for i, (text, p) in enumerate(top)]))
    st.caption(t("classroom.reveal.reading"))


def _choice_result(question: Question, tally: Tally, key: str) -> None:
    labels = option_labels(question)
    counts = [int(tally.counts.get(str(i), 0)) for i in range(len(labels))]
    correct, why = _correct_and_why(question)
    shown = [f"{chr(65 + i)}. {label}" for i, label in enumerate(labels)]
    spec = charts.choice_chart(shown, counts, correct,
                               title=t("classroom.reveal.choice_title"), x_title=t("classroom.reveal.count"),
                               y_title=t("classroom.reveal.option"), mark_title=t("classroom.reveal.mark"),
                               right=t("classroom.reveal.right"), other=t("classroom.reveal.other"))
    vega(spec, width="stretch", key=f"{key}_chart")
    if correct is not None:
        st.success(t("classroom.reveal.right_is", option=escape_markdown(shown[correct])))
    if why:
        st.info(escape_markdown(why))


def _counts_table(tally: Tally) -> None:
    st.markdown(markdown_table([t("classroom.reveal.answer"), t("classroom.reveal.count")],
                               [[answer, n] for answer, n in tally.counts.items()]))
