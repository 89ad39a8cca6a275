"""Cached access to the model core.

``cache_resource`` holds the one shared model per preset (never mutated: the core keeps
no run state on modules, so concurrent students are safe); ``cache_data`` holds derived
arrays keyed by (model, prompt), so moving a slider never re-runs the model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

import core
from core.checkpoint import CheckpointError
from core.prompt import PromptProblem, clean_prompt
from ui.i18n import t


THREADS_ENV_VAR = "TOKEN_JOURNEY_THREADS"


def limit_cpu_threads() -> None:
    """One torch thread per request by default when serving on the CPU.

    A classroom server runs many tiny forwards from many sessions at once; each one is a
    few milliseconds, and intra-op threads then only fight each other (measured: one
    generation step 9.7 ms with 1 thread vs 78-174 ms with 2 on a loaded 2-core machine,
    bench/output_pages.py). Override with TOKEN_JOURNEY_THREADS.
    """
    import torch

    torch.set_num_threads(max(1, int(os.environ.get(THREADS_ENV_VAR, "1"))))


@st.cache_resource(show_spinner=False)
def get_model(name: str) -> Any:
    """The loaded built-in preset (``core.load_builtin``), shared by every session."""
    limit_cpu_threads()
    return core.load_builtin(name)


@dataclass(frozen=True)
class PromptRun:
    """One forward pass over the sidebar prompt, as plain numpy."""

    model_name: str
    text: str
    ids: list[int]
    tokens: list[str]
    logits: np.ndarray  # (pos, vocab)
    trace: dict[str, np.ndarray]
    truncated_from: int | None  # original token count when the prompt was cut to n_ctx

    def labels(self) -> list[str]:
        """Unique, readable axis labels: ``"3·首都"`` (position · token)."""
        return [f"{i}·{tok}" for i, tok in enumerate(self.tokens)]


@st.cache_data(max_entries=256, show_spinner=False)
def _run(model_name: str, text: str) -> PromptRun:
    loaded = get_model(model_name)
    ids = loaded.tokenizer.encode(text)
    n_ctx = loaded.config.n_ctx
    truncated_from = None
    if len(ids) > n_ctx:
        truncated_from = len(ids)
        ids = ids[-n_ctx:]  # keep the end: it is what the next token depends on
    logits, trace = loaded.model.run_with_trace(ids)
    tokens = [loaded.tokenizer.decode([i]) for i in ids]
    return PromptRun(model_name, text, ids, tokens, logits, trace, truncated_from)


def run_prompt(model_name: str, prompt: str) -> PromptRun:
    """Clean the prompt and run the model; raises ``PromptProblem`` for bad text."""
    cleaned = clean_prompt(prompt)
    return _run(model_name, cleaned.text)


def run_prompt_or_stop(model_name: str, prompt: str) -> PromptRun:
    """Like ``run_prompt`` but shows a translated message and stops the page on bad input."""
    try:
        run = run_prompt(model_name, prompt)
    except PromptProblem as problem:
        st.warning(t(f"prompt.problem.{problem.code}"))
        st.stop()
    except CheckpointError as broken:  # missing or corrupt files: say which and how to retrain
        st.error(t("model.missing", detail=str(broken)))
        st.stop()
    if run.truncated_from is not None:
        st.info(t("prompt.truncated", n=run.truncated_from, kept=len(run.ids)))
    return run
