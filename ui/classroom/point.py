""""Point at it" questions: every student picks a head (layer × head) or a token of the prompt.

The question's spec (``rules.check_question("point", …)``) holds the grid's size — the model's
layers × heads, or one row of the prompt's positions — and the view it was asked on (prompt and
model), so each screen labels the tokens itself; answers are "row,col" and the store refuses a
cell outside the grid. The reveal writes the count in every cell (a heatmap of counts for heads,
a bar per token): colour is never the only cue.

Example: head_spec("classic", "小明把苹果放进书包，因为它太甜了", "Which head links 它 to 苹果?")
    -> {"rows": 4, "cols": 4, "target": "head", "text": "...", "prompt": "...", "model": "classic"}
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import streamlit as st

from core.engine.checkpoint import CheckpointError
from core.engine.prompt import PromptProblem
from serving.classroom.rules import Question, Tally
from serving.models import UnknownModel
from ui.charts.common import heatmap, vega
from ui.classroom import charts
from ui.i18n import t
from ui.text import escape_markdown, markdown_table

HEAD: Final = "head"
POSITION: Final = "position"
TARGETS: Final = (HEAD, POSITION)
TOKEN_CHARS: Final = 24  # a token's label in a picker and on the chart (a long byte run is cut)
CANNOT_RUN: Final = (PromptProblem, CheckpointError, UnknownModel)


def head_spec(model_name: str, prompt: str, text: str) -> dict[str, Any]:
    """The spec of "which head …?" on the teacher's model: a grid of its layers × heads."""
    from serving.models import get_model

    config = get_model(model_name).config
    return {"rows": int(config.n_layer), "cols": int(config.n_head), "target": HEAD, "text": text,
            "prompt": prompt, "model": model_name}


def position_spec(model_name: str, prompt: str, text: str) -> dict[str, Any]:
    """The spec of "which token …?" on the teacher's prompt: one row of its positions."""
    from serving.models import run_prompt

    tokens = run_prompt(model_name, prompt).tokens
    return {"rows": 1, "cols": len(tokens), "target": POSITION, "text": text, "prompt": prompt,
            "model": model_name}


def _shown_token(token: str) -> str:
    """A token as one short line: a space or line break stays visible."""
    text = token.replace("\n", "⏎").replace("\r", "⏎").replace("\t", "⇥")
    text = text.replace(" ", "␣") if not text.strip() else text
    return text if len(text) <= TOKEN_CHARS else text[:TOKEN_CHARS - 1] + "…"


def token_labels(question: Question) -> list[str]:
    """One label per position, "3 · 它"; just the position where the prompt cannot run here."""
    cols = int(question.spec["cols"])
    tokens: list[str] = []
    if question.spec.get("prompt") is not None:
        from serving.models import run_prompt

        try:
            tokens = list(run_prompt(str(question.spec["model"]), str(question.spec["prompt"])).tokens)
        except CANNOT_RUN:
            tokens = []
    if len(tokens) != cols:
        return [t("classroom.point.position_n", n=i) for i in range(cols)]
    return [f"{i} · {_shown_token(tok)}" for i, tok in enumerate(tokens)]


def layer_labels(rows: int) -> list[str]:
    return [t("classroom.point.layer_n", n=i) for i in range(rows)]


def head_labels(cols: int) -> list[str]:
    return [t("classroom.point.head_n", n=i) for i in range(cols)]


def default_text(question: Question) -> str:
    """The question's words when the teacher typed none."""
    return t("classroom.q.point_head" if question.spec.get("target") == HEAD else "classroom.q.point_position")


def cell_label(question: Question, counted: str, tokens: list[str] | None = None) -> str:
    """A counted answer "2,3" as a reader says it: "layer 2, head 3" or "3 · 它" (plain text;
    ``tokens``: the question's ``token_labels`` when the caller has them already)."""
    try:
        row, col = (int(part) for part in counted.split(","))
    except ValueError:
        return counted
    if question.spec.get("target") == HEAD:
        return t("classroom.point.cell", layer=row, head=col)
    labels = tokens if tokens is not None else token_labels(question)
    return labels[col] if 0 <= col < len(labels) else counted


# --- a student's answer -----------------------------------------------------------------------


def answer_controls(question: Question, form_key: str) -> None:
    """Labelled pickers inside the student's answer form: a layer and a head, or a token."""
    rows, cols = int(question.spec["rows"]), int(question.spec["cols"])
    placeholder = t("classroom.point.choose")
    if question.spec.get("target") == HEAD:
        layers, heads = layer_labels(rows), head_labels(cols)
        left, right = st.columns(2)
        left.selectbox(t("classroom.point.layer"), list(range(rows)), index=None, placeholder=placeholder,
                       format_func=lambda i: layers[i], key=f"{form_key}_row")
        right.selectbox(t("classroom.point.head"), list(range(cols)), index=None, placeholder=placeholder,
                        format_func=lambda i: heads[i], key=f"{form_key}_col")
    else:
        labels = token_labels(question)
        st.selectbox(t("classroom.point.token"), list(range(cols)), index=None, placeholder=placeholder,
                     format_func=lambda i: labels[i], key=f"{form_key}_col")


def picked(question: Question, form_key: str) -> tuple[Any, Any] | None:
    """What the pickers hold, unchecked (the store checks the cell); None while one is empty."""
    row = st.session_state.get(f"{form_key}_row") if question.spec.get("target") == HEAD else 0
    col = st.session_state.get(f"{form_key}_col")
    if row is None or col is None:
        return None
    return row, col


# --- the reveal -------------------------------------------------------------------------------


def counts_grid(question: Question, tally: Tally) -> np.ndarray:
    """counts[row, col] of the class's picks (answers outside the grid cannot be stored)."""
    grid = np.zeros((int(question.spec["rows"]), int(question.spec["cols"])), dtype=np.int64)
    for answer, n in tally.counts.items():
        row, col = (int(part) for part in answer.split(","))
        grid[row, col] += int(n)
    return grid


def _readable_counts(spec: dict[str, Any], most: float) -> None:
    """White count text on the dark half of the blues (the shared heatmap writes dark text)."""
    for layer in spec.get("layer", ()):
        if layer.get("mark", {}).get("type") == "text":
            layer["encoding"]["color"] = {"condition": {"test": f"datum.value > {most / 2!r}", "value": "#ffffff"},
                                          "value": "#111111"}


def show_result(question: Question, tally: Tally, key: str) -> None:
    grid = counts_grid(question, tally)
    tokens = token_labels(question) if question.spec.get("target") == POSITION else None
    if question.spec.get("target") == HEAD:
        rows, cols = grid.shape
        spec = heatmap(grid.astype(float), layer_labels(rows), head_labels(cols),
                       title=t("classroom.point.grid_title"), x_title=t("classroom.point.head"),
                       y_title=t("classroom.point.layer"), value_title=t("classroom.reveal.count"),
                       value_format=".0f", show_values=True, cell_size=40)
        _readable_counts(spec, float(grid.max()))
    else:
        spec = charts.count_chart(tokens or [], [int(n) for n in grid[0]], title=t("classroom.point.tokens_title"),
                                  x_title=t("classroom.reveal.count"), y_title=t("classroom.point.token"))
    vega(spec, key=f"{key}_chart")
    if tally.total:
        most = max(int(n) for n in tally.counts.values())
        top = [cell_label(question, a, tokens) for a, n in tally.counts.items() if int(n) == most]
        st.markdown(t("classroom.point.most", cells=escape_markdown("; ".join(top)), n=most))
    st.markdown(markdown_table([t("classroom.reveal.answer"), t("classroom.reveal.count")],
                               [[cell_label(question, a, tokens), n] for a, n in tally.counts.items()]))
