"""The Overview's journey picture: it renders with the live prompt's numbers in both
languages, and what the browser sends back is checked before Python acts on it."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import streamlit as st

import core
from tests.app.conftest import open_page, overview_svg
from ui.components import journey as journey_mod
from ui.i18n import load_strings


def _component(at):
    def walk(node):
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    found = [n for n in walk(at.main) if type(getattr(n, "proto", None)).__name__ == "BidiComponent"]
    assert len(found) == 1, "the journey component is missing"
    return found[0].proto


def test_overview_renders_the_journey(lang: str) -> None:
    prompt = "法国的首都是" if lang == "zh" else "The capital of France is"
    at = open_page(None, lang=lang, prompt=prompt)
    assert not at.exception, [e.value for e in at.exception]
    proto = _component(at)
    assert proto.component_name == journey_mod.COMPONENT_NAME
    assert proto.js_content.startswith("//") and proto.css_content
    data = json.loads(proto.json)
    loaded = core.load_builtin("classic")
    ids = loaded.tokenizer.encode(prompt)
    assert [t["id"] for t in data["journey"]["tokens"]] == ids
    logits = loaded.model.logits(ids)[-1]
    assert data["journey"]["top"][0]["id"] == int(logits.argmax())
    strings = load_strings(lang)
    assert data["labels"]["animate"] == strings["journey.animate"]
    assert data["labels"]["tip_prob"] == strings["journey.tip_prob"]  # templates go raw: filled in the browser
    assert not [v for v in data["labels"].values() if "⟦" in v], "a journey label is missing"
    assert strings["journey.title"] in [h.value for h in at.subheader]
    assert set(data["pages"]) >= {"tokens", "embed", "pos", "attn", "logits", "probs", "output"}
    assert data["pages"]["attn"] == "multi_head_attention"
    overview_svg(at)  # the static diagram stays as the fallback


def test_coreference_prompt_focuses_the_pronoun() -> None:
    from core.lessons.head_analysis import COREF_PAIRS
    pair = COREF_PAIRS[0]
    at = open_page(None, lang="zh", prompt=pair.to_fruit.prompt)
    data = json.loads(_component(at).json)
    focus = data["focus"]
    assert focus is not None
    assert data["journey"]["tokens"][focus["query"]]["text"] == "它"
    assert data["coref"] == pair.key and "苹果" in data["labels"]["coref"]


# --- the messages the browser sends ---------------------------------------------------------


@dataclass
class _Run:
    text: str
    ids: list[int]


class _Calls(Exception):
    pass


@pytest.fixture
def fake_session(monkeypatch):
    calls: list[tuple[str, object]] = []
    monkeypatch.setattr(st, "session_state", {})

    def switch(path):
        calls.append(("switch", path))
        raise _Calls

    def rerun(scope="app"):
        calls.append(("rerun", scope))
        raise _Calls

    monkeypatch.setattr(st, "switch_page", switch)
    monkeypatch.setattr(st, "rerun", rerun)
    return calls


def _send(action, calls, run=None):
    loaded = core.load_builtin("classic")
    run = run or _Run("The capital of France is", loaded.tokenizer.encode("The capital of France is"))
    try:
        journey_mod._handle(action, run, loaded, "en")
    except _Calls:
        pass
    return loaded, run


def test_open_switches_page_in_the_session(fake_session) -> None:
    _send({"kind": "open", "page": "multi_head_attention"}, fake_session)
    assert fake_session == [("switch", "pages/multi_head_attention.py")]


@pytest.mark.parametrize("action", [
    None, "open", [], {"kind": "open", "page": "../../etc/passwd"}, {"kind": "open", "page": "app"},
    {"kind": "open", "page": 3}, {"kind": "generate", "id": -1, "n": 6}, {"kind": "generate", "id": True, "n": 6},
    {"kind": "generate", "id": 10 ** 9, "n": 6}, {"kind": "generate", "id": "5", "n": 6},
    {"kind": "generate", "id": 5, "n": 99}, {"kind": "preset", "key": "../x"}, {"kind": "nope"},
])
def test_malformed_messages_do_nothing(fake_session, action) -> None:
    _send(action, fake_session)
    assert fake_session == []
    assert "prompt" not in st.session_state


def test_generate_appends_the_token_and_keeps_the_knobs(fake_session) -> None:
    loaded = core.load_builtin("classic")
    text = "The capital of France is"
    run = _Run(text, loaded.tokenizer.encode(text))
    token = loaded.tokenizer.encode(" Paris")[0]
    _send({"kind": "generate", "id": token, "n": len(run.ids),
           "knobs": {"temperature": 9.0, "top_k": 5, "top_p": "x"}}, fake_session, run)
    assert fake_session == [("rerun", "app")]
    assert st.session_state["prompt"] == text + loaded.tokenizer.decode([token])
    assert st.session_state["sampling_temperature"] == 3.0  # clamped to the Logits page's range
    assert st.session_state["sampling_top_k"] == 5
    assert "sampling_top_p" not in st.session_state  # a bad value is dropped
    assert st.session_state[journey_mod.AUTOPLAY]


def test_coreference_button_toggles_the_two_versions(fake_session) -> None:
    from core.lessons.head_analysis import COREF_PAIRS
    pair = next(p for p in COREF_PAIRS if p.lang == "en")
    _send({"kind": "preset", "key": pair.key}, fake_session)
    assert st.session_state["prompt"] == pair.to_fruit.prompt
    loaded = core.load_builtin("classic")
    _send({"kind": "preset", "key": pair.key}, fake_session,
          _Run(pair.to_fruit.prompt, loaded.tokenizer.encode(pair.to_fruit.prompt)))
    assert st.session_state["prompt"] == pair.to_container.prompt


def test_chinese_labels_have_no_english_words() -> None:
    import re
    at = open_page(None, lang="zh", prompt="法国的首都是")
    data = json.loads(_component(at).json)
    shown = [re.sub(r"\{\w+\}", "", text) for text in data["labels"].values()]  # placeholders are filled in
    words = {w for text in shown for w in re.findall(r"[A-Za-z]{3,}", text)}
    assert words <= {"MLP", "RoPE"}, words  # terms the Chinese textbook writes in Latin letters
