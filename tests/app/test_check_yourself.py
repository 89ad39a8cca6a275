"""The "check yourself" card (``ui.check_yourself``): predict, reveal, durable picks, and the
live questions whose answers must equal core's numbers for the prompt on the page."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.engine.sampling import apply_temperature, softmax
from core.lessons import attention_math as am
from core.lessons.kv_memory import format_bytes, kv_cache_memory
from serving.classroom.bank import STATIONS, bank
from serving.models import run_prompt
from tests.app.conftest import APP, LANGS, assert_clean, open_page
from tests.unit.test_class_bank import MARKDOWN_SYNTAX
from ui.i18n import load_strings
from ui.text import escape_markdown

MODEL = "classic"  # the sidebar's default model


def _radios(at: AppTest, page: str) -> list:
    return [r for r in at.radio if r.key and r.key.startswith(f"cy_{page}_pick_")]


def _radio(at: AppTest, page: str):  # noqa: ANN202 (AppTest's Radio)
    found = _radios(at, page)
    assert len(found) == 1, [r.key for r in at.radio]
    return found[0]


def _marked(at: AppTest, option: str, mark: str) -> bool:
    """The revealed list shows ``option`` with ``mark`` (the answer, your pick) in words."""
    return any(line.startswith(f"- {escape_markdown(option)} — ") and mark in line
               for m in at.markdown for line in str(m.value).splitlines())


def _reveal(at: AppTest, page: str) -> AppTest:
    return at.button(key=f"cy_{page}_reveal").click().run()


def _results(at: AppTest) -> tuple[list[str], list[str]]:
    """The card's revealed result: (correct, not quite), told apart from the page's own alerts by icon."""
    return ([str(s.value) for s in at.success if s.icon == "✅"],
            [str(w.value) for w in at.warning if w.icon == "💡"])


def _plain(text: str) -> str:
    """Escaped Markdown back to the text a student reads."""
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("lang", LANGS)
def test_predict_then_reveal_a_bank_question(lang: str) -> None:
    page = "whole_model"
    at = open_page(page, lang=lang)
    assert_clean(at)
    first, second = bank(lang).for_station(page)[:2]
    radio = _radio(at, page)
    assert _plain(radio.label) == first.text
    assert [_plain(o) for o in radio.options] == list(first.options)
    assert radio.value is None
    assert at.button(key=f"cy_{page}_reveal").disabled  # predict first
    wrong = (first.correct + 1) % len(first.options)
    radio.set_value(wrong).run()
    assert not at.button(key=f"cy_{page}_reveal").disabled
    _reveal(at, page)
    assert_clean(at)
    successes, warnings = _results(at)
    assert not successes and len(warnings) == 1
    assert first.options[first.correct] in _plain(warnings[0]) and first.explanation in _plain(warnings[0])
    assert not _radios(at, page)  # revealed: the options become a list that says which is which
    strings = load_strings(lang)
    assert _marked(at, first.options[first.correct], strings["check_yourself.mark.correct"])
    assert _marked(at, first.options[wrong], strings["check_yourself.mark.yours"])
    at.button(key=f"cy_{page}_again").click().run()  # try again: predict anew
    assert _radio(at, page).value is None
    at.button(key=f"cy_{page}_next").click().run()
    radio = _radio(at, page)
    assert _plain(radio.label) == second.text and radio.value is None
    radio.set_value(second.correct).run()
    _reveal(at, page)
    successes, warnings = _results(at)
    assert len(successes) == 1 and not warnings and second.explanation in _plain(successes[0])


def test_the_pick_and_the_reveal_survive_a_page_change() -> None:
    at = open_page("tokenization", lang="zh")
    question = bank("zh").for_station("tokenization")[0]
    _radio(at, "tokenization").set_value(question.correct).run()
    _reveal(at, "tokenization")
    at.switch_page("pages/embeddings.py").run()
    assert_clean(at)
    assert _radio(at, "embeddings").value is None  # another station, another card
    at.switch_page("pages/tokenization.py").run()
    assert_clean(at)
    assert not _radios(at, "tokenization")
    assert len(_results(at)[0]) == 1
    assert _marked(at, question.options[question.correct], load_strings("zh")["check_yourself.mark.yours"])


def test_every_station_page_ends_with_a_card() -> None:
    at = open_page(None, lang="en")
    for page in STATIONS:
        if page in ("logits_sampling", "generation", "self_attention", "whole_model", "tokenization"):
            continue  # opened by the tests above and below
        at.switch_page(f"pages/{page}.py").run()
        assert_clean(at)
        assert _plain(_radio(at, page).label) == bank("en").for_station(page)[0].text


def test_a_crafted_card_state_falls_back() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    for bad in ({"at": -1, "picks": {}}, {"at": 0, "picks": {"x": [9, True, "abcdefgh"]}}, "nope", {"evil": 1}):
        at.session_state["kept.cy_embeddings"] = bad
        at.switch_page("pages/embeddings.py").run()
        assert_clean(at)
        assert at.session_state["kept.cy_embeddings"] == {"at": 0, "picks": {}}
        assert _radio(at, "embeddings").value is None


# --- live questions: the answer the card judges correct is core's number ------------------------------


def _pick_and_reveal(at: AppTest, page: str, wanted: str) -> list[str]:
    """Pick the one option that reads ``wanted`` (a core value), reveal, return the successes."""
    radio = _radio(at, page)
    matches = [i for i, o in enumerate(radio.options) if wanted in _plain(o)]
    assert len(matches) == 1, (wanted, radio.options)
    radio.set_value(matches[0]).run()
    _reveal(at, page)
    assert_clean(at)
    successes, warnings = _results(at)
    assert not warnings, warnings
    return successes


@pytest.mark.parametrize(("lang", "prompt", "asked"), [
    ("en", "Tom put the apple in the bag because it was too", "0.2"),  # an uncertain top token: 0.2 sharpens it
    ("zh", "小明把苹果放进书包，因为它太甜了。它", "2"),  # near certain already: the card asks what 2 flattens
])
def test_logits_live_answer_is_cores_temperature(lang: str, prompt: str, asked: str) -> None:
    at = open_page("logits_sampling", lang=lang, prompt=prompt)
    assert_clean(at)
    label = _plain(_radio(at, "logits_sampling").label)
    shown_p1 = re.search(r"\d\.\d+", label).group()  # the top token's probability at temperature 1
    temperature = re.search(r"(\d+(?:\.\d+)?)\D*$", label).group(1)  # the temperature asked about
    assert temperature == asked
    logits = run_prompt(MODEL, prompt).logits[-1].astype(np.float64)
    top = int(np.lexsort((np.arange(logits.size), -logits))[0])
    digits = len(shown_p1.split(".")[1])
    assert shown_p1 == f"{softmax(logits)[top]:.{digits}f}"
    p_t = float(apply_temperature(logits, float(temperature))[top])
    assert (p_t > softmax(logits)[top]) == (float(temperature) < 1)
    successes = _pick_and_reveal(at, "logits_sampling", f"{p_t:.{digits}f}")
    assert len(successes) == 1


@pytest.mark.parametrize("prompt", ["The capital of France is", "法国的首都是北京。中国的首都是"])
def test_generation_live_answer_is_cores_kv_cache_size(prompt: str) -> None:
    at = open_page("generation", lang="en", prompt=prompt)
    assert_clean(at)
    run = run_prompt(MODEL, prompt)
    from serving.models import get_model

    cfg = get_model(MODEL).config
    memory = kv_cache_memory(cfg.n_layer, cfg.n_kv_head, cfg.d_head, len(run.ids), dtype="fp16")
    assert f" {len(run.ids)} tokens" in _plain(_radio(at, "generation").label)
    assert len(_pick_and_reveal(at, "generation", format_bytes(memory.total_bytes))) == 1


def test_self_attention_live_answer_is_cores_scaled_weight() -> None:
    at = open_page("self_attention", lang="zh")
    assert_clean(at)
    steps = am.attention_steps(am.SEED_X, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V, scale=True, causal=False)
    assert len(_pick_and_reveal(at, "self_attention", f"{steps.weights[0, 0]:.2f}")) == 1


def test_a_live_pick_is_dropped_when_the_numbers_change() -> None:
    at = open_page("generation", lang="en", prompt="The capital of France is")
    radio = _radio(at, "generation")
    radio.set_value(0).run()
    at.session_state["prompt"] = "The capital of France is Paris, and the capital of Italy is"
    at.run()
    assert_clean(at)
    assert _radio(at, "generation").value is None
    assert any("changed since your pick" in str(c.value) for c in at.caption)


def test_text_typed_by_the_student_is_escaped() -> None:
    at = open_page("self_attention", lang="en")
    at.session_state["kept.sa_tokens"] = "**粗体** 爱 你"  # the page's token names, typed in its box
    at.run()
    assert_clean(at)
    label = _radio(at, "self_attention").label
    assert escape_markdown("**粗体**") in label and "**粗体**" not in label.replace("\\*", "")


def test_live_question_templates_have_no_markdown_syntax() -> None:
    for lang in LANGS:
        strings = load_strings(lang)
        for key in [k for k in strings if k.startswith("check_yourself.live.")]:
            assert not MARKDOWN_SYNTAX.search(strings[key]), (lang, key)


def test_a_crafted_pick_is_refused() -> None:
    """A modified client sends any value for the radio: nothing is stored, nothing breaks."""
    from tests.app.test_bad_input import run_with

    at = open_page("whole_model", lang="en")
    widget = _radio(at, "whole_model").key
    for bad in ("7", "-1", "x", "1e9"):
        at = run_with(at, {widget: bad})
        assert_clean(at)
        assert at.session_state["kept.cy_whole_model"] == {"at": 0, "picks": {}}
        assert _radio(at, "whole_model").value is None
