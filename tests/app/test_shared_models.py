"""The shared model registry survives a browser's clear-cache request ([W2-E] item 5)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.state import SessionState

from tests.app.components import component_data
from tests.app.conftest import open_page
from ui import resources


def _clear_cache_from_a_browser() -> None:
    """Exactly what Streamlit does for a ``clear_cache`` back-message from any session."""
    AppSession._handle_clear_cache_request(SimpleNamespace(_session_state=SessionState()))


def test_clear_cache_from_one_student_does_not_unload_the_model_or_runs() -> None:
    model = resources.get_model("classic")
    run = resources.run_prompt("classic", "The capital of France is")
    _clear_cache_from_a_browser()
    assert resources.get_model("classic") is model
    assert resources.run_prompt("classic", "The capital of France is") is run


def test_clear_cache_between_two_sessions_keeps_the_other_working() -> None:
    first = open_page(None, lang="en")
    model = resources.get_model("classic")
    _clear_cache_from_a_browser()
    second = open_page("multi_head_attention", lang="en")
    assert not first.exception and not second.exception, [e.value for e in (*first.exception, *second.exception)]
    heads = component_data(second, "mha_heads")  # every head's pattern, drawn in the browser
    assert heads and heads.get("show_grid", True), "the second student's page sent its heads"
    first.run()  # the first student's next rerun still has the model
    assert not first.exception
    assert resources.get_model("classic") is model


def test_concurrent_get_model_returns_one_object() -> None:
    got: list[object] = []
    barrier = threading.Barrier(6)

    def worker() -> None:
        barrier.wait()
        got.append(resources.get_model("modern"))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(got) == 6 and all(m is got[0] for m in got)


def test_prompt_runs_are_shared_and_read_only() -> None:
    run = resources.run_prompt("classic", "The capital of France is")
    assert resources.run_prompt("classic", "The capital of France is") is run
    assert not run.logits.flags.writeable
    assert all(not arr.flags.writeable for arr in run.trace.values())
    with pytest.raises(ValueError):
        run.logits[0, 0] = 1.0
    with pytest.raises(TypeError):
        run.ids.append(0)
    assert np.isfinite(run.logits).all()


def test_unknown_model_name_is_refused() -> None:
    with pytest.raises(KeyError):
        resources.get_model("../../assets/models/classic")
    with pytest.raises(KeyError):
        resources.run_prompt("not-a-model", "hello")


def test_builtins_are_available_and_registration_adds_a_name() -> None:
    names = resources.available_model_names()
    assert names[:2] == ["classic", "modern"]
    marker = object()
    resources.register("test-only-model", lambda: marker, replace=True)
    try:
        assert "test-only-model" in resources.available_model_names()
        assert resources.get_model("test-only-model") is marker
    finally:
        resources.registry().unregister("test-only-model")
    assert "test-only-model" not in resources.available_model_names()


def test_memo_shares_one_read_only_result_per_argument() -> None:
    calls: list[int] = []

    @resources.memo(maxsize=4)
    def square(values: np.ndarray, scale: int) -> np.ndarray:
        calls.append(1)
        return values * scale

    a = square(np.arange(3), 2)
    b = square(np.arange(3), 2)
    assert a is b and len(calls) == 1 and not a.flags.writeable
    square(np.arange(3), 3)
    assert len(calls) == 2
