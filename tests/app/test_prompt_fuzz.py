"""[W2-E] Any sidebar prompt — arbitrary Unicode up to 3,000 characters — on every page that runs
the model: never an exception (a message in the page's language where the text is refused).

200 examples in all, spread over the model pages (one AppTest per page, shared); Hypothesis runs
derandomized, so CI sees the same examples every time.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean
from ui import nav

MODEL_PAGES = [p for _, pages in nav.existing_sections() for p in pages
               if p.page_id not in ("tokenization", "self_attention")]  # these two never run the sidebar prompt
_OPEN: dict[str, AppTest] = {}


def _page(index: int) -> AppTest:
    info = MODEL_PAGES[index]
    at = _OPEN.get(info.page_id)
    if at is None:
        at = AppTest.from_file(APP, default_timeout=120)
        at.session_state["lang"] = ("en", "zh")[index % 2]  # both languages among the pages
        at.run()
        if info.path != "app.py":
            at.switch_page(info.path)
            at.run()
        _OPEN[info.page_id] = at
    return at


PROMPTS = st.one_of(
    st.text(max_size=3000),  # any code point but lone surrogates (a browser sends UTF-8)
    st.text(st.characters(codec="utf-8", categories=("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "So", "Lo")), max_size=3000),
    st.text(st.sampled_from("*_`[]()!#$\\<>|~:{}%&\n\t 法国首都巴黎The capital"), max_size=300),
)


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(page=st.integers(min_value=0, max_value=len(MODEL_PAGES) - 1), prompt=PROMPTS)
def test_any_prompt_on_any_model_page(page: int, prompt: str) -> None:
    at = _page(page)
    at.session_state["prompt"] = prompt
    at.run()
    assert not at.exception, (MODEL_PAGES[page].page_id, [e.value for e in at.exception])


def test_pages_work_after_the_fuzzing() -> None:
    for index in range(len(MODEL_PAGES)):
        at = _page(index)
        at.session_state["prompt"] = "The capital of France is"
        at.run()
        assert_clean(at)
