"""The Streamlit side of the shared models: the names pages import, and the start-up call.

Everything process-wide lives in ``serving`` (``serving.models``: the registry and the shared
forward passes; ``serving.startup``: the start). This module adds what needs Streamlit: the
translated stop-the-page helpers, and ``start_once()``, which ``ui.page.setup`` calls first on
every page (a no-op once ``streamlit run app.py`` has started the server with the same ``APP``
parts, in ``app.py``'s ``st.App`` lifespan). Importing it starts nothing.

Example: run = run_prompt_or_stop("classic", "The capital of France is")
"""

from __future__ import annotations


import streamlit as st

from core.engine.checkpoint import CheckpointError
from core.engine.prompt import PromptProblem
from serving import settings as _settings
from serving import startup
from serving.models import (
    PromptRun,
    UnknownModel,
    add_foreign,
    add_precompute,
    available_model_names,
    builtin_model_names,
    foreign_model_names,
    get_model,
    is_foreign,
    register,
    registry,
    run_prompt,
    shared,
)
from serving.process import limit_cpu_threads as _limit_cpu_threads
from serving.memo import memo
from serving.startup import first_page_drawn
from ui import precompute
from ui.i18n import t
from ui.messages import checkpoint_message

__all__ = [
    "APP",
    "PromptRun",
    "UnknownModel",
    "add_foreign",
    "add_precompute",
    "available_model_names",
    "builtin_model_names",
    "first_page_drawn",
    "foreign_model_names",
    "get_model",
    "is_foreign",
    "limit_cpu_threads",
    "memo",
    "register",
    "registry",
    "require_model_or_stop",
    "run_prompt",
    "run_prompt_or_stop",
    "shared",
    "start_once",
]


# What the app adds to the server's start: the pages' precompute hooks, the second-tier tables,
# and the chart modules the pages import (loaded before the long-lived heap is frozen).
APP = startup.AppParts(
    precompute=precompute.hooks,
    after_start=precompute.AFTER_START,
    warm_imports=("altair", "pandas", "pyarrow", "ui.charts.attention", "ui.charts.output",
                  "ui.charts.positional", "ui.charts.tokens", "ui.charts.vectors"),
)


def start_once() -> None:
    """Start the server's process-wide work (once per process; a malformed setting exits with 2)."""
    startup.start_once(APP)


def limit_cpu_threads() -> None:
    """torch's and numpy's thread pools at the ``threads`` setting (see ``serving.process``)."""
    _limit_cpu_threads(_settings.active().threads)


def require_model_or_stop(name: str) -> None:
    """Load the chosen model (others keep serving meanwhile) or explain, translated, why it cannot be."""
    from core.foreign import ForeignModelError
    from ui.messages import foreign_model_message

    if not is_foreign(name) or registry().is_loaded(name):
        return
    try:
        with st.spinner(t("foreign.loading", name=name)):
            registry().get(name)
    except ForeignModelError as error:
        st.error(foreign_model_message(error, name))
        st.info(t("foreign.builtins_still_work"))
        st.stop()


def run_prompt_or_stop(model_name: str, prompt: str) -> PromptRun:
    """Like ``run_prompt`` but shows a translated message and stops the page on bad input."""
    try:
        run = run_prompt(model_name, prompt)
    except PromptProblem as problem:
        st.warning(t(f"prompt.problem.{problem.code}"))
        st.stop()
    except (CheckpointError, UnknownModel) as broken:  # which file is at fault and how to rebuild it
        st.error(checkpoint_message(broken, model_name))
        st.stop()
    if run.truncated_from is not None:
        st.info(t("prompt.truncated", n=run.truncated_from, kept=len(run.ids), n_ctx=len(run.ids) + 1))
    return run
