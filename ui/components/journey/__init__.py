"""The Overview's journey picture: a Streamlit components-v2 component (bundled JS, no CDN).

The browser code lives in ``ui/components/frontend/src`` and is built into
``ui/components/frontend/build`` (committed, so running the app needs no Node; rebuild with
``scripts/build_components.sh``). Python computes
the numbers (``core.lessons.journey``), translates the labels, and acts on what the picture sends
back: open a stage's page in this session, append the sampled token, set the coreference
prompt. Every value the browser sends is checked before it is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from core.lessons import head_analysis
from core.lessons.journey import attention_focus, journey_data
from ui import nav, state
from ui.tokens import token_labels
from ui.i18n import t
from ui.tokens import display_token

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.journey"
AUTOPLAY = "_journey_autoplay"  # set after "Generate next": the new picture replays once

# Stage -> page id (only pages that exist are passed, so a missing page is not clickable).
STAGE_PAGES: dict[str, tuple[str, ...]] = {
    "tokens": ("tokenization",),
    "embed": ("embeddings",),
    "pos": ("positional_encoding",),
    "attn": ("multi_head_attention",),
    "mlp": ("transformer_block",),
    "final_norm": ("whole_model",),
    "logits": ("logits_sampling",),
    "probs": ("logits_sampling",),
    "output": ("generation",),
}

LABEL_KEYS: tuple[str, ...] = (
    "animate", "pause", "step", "layer", "head", "coref", "coref_help", "open", "tokens", "embed",
    "pos", "resid0", "pos_added", "pos_rope", "block", "final_norm", "logits", "logits_note",
    "probs", "temperature", "top_k", "top_p", "off", "output", "generate", "output_note",
    "tip_token", "tip_cell", "tip_vector", "tip_resid", "tip_mlp", "tip_attn", "tip_logit",
    "tip_prob", "cut_k", "cut_p", "status_query", "status_stage", "hidden_rows",
)


def _read(name: str) -> str:
    return (BUILD / name).read_text(encoding="utf-8")


_mount = st.components.v2.component(
    COMPONENT_NAME, js=_read("journey.js"), css=_read("journey.css"), isolate_styles=True,
)


def _pages() -> dict[str, str]:
    existing = {p.page_id for _, pages in nav.existing_sections() for p in pages}
    out: dict[str, str] = {}
    for stage, candidates in STAGE_PAGES.items():
        for page_id in candidates:
            if page_id in existing:
                out[stage] = page_id
                break
    return out


def _coref_pair(lang: str) -> head_analysis.CorefPair:
    return next(p for p in head_analysis.COREF_PAIRS if p.lang == lang)


def _focus(data: dict[str, Any], raw_tokens: list[str], prompt: str) -> dict[str, int] | None:
    """For a coreference prompt: the pronoun's row, and the head that looks hardest at the two nouns."""
    for pair in head_analysis.COREF_PAIRS:
        if prompt not in (pair.to_fruit.prompt, pair.to_container.prompt):
            continue
        pronoun = "它" if pair.lang == "zh" else " it"
        try:
            query = head_analysis.find_word(raw_tokens, pronoun)[0]
            keys = head_analysis.find_word(raw_tokens, pair.fruit) + head_analysis.find_word(raw_tokens, pair.container)
        except ValueError:
            return None
        return attention_focus(data, query, sorted(set(keys)))
    return None


def _sampling_knobs() -> dict[str, Any]:
    return {
        "temperature": float(state.get("sampling_temperature")),
        "top_k": int(state.get("sampling_top_k")),
        "top_p": float(state.get("sampling_top_p")),
    }


def build_data(run: Any, loaded: Any, *, lang: str, seed: int, presenter: bool) -> dict[str, Any]:
    """The component's whole input: numbers from core, labels in the page's language."""
    tokenizer = loaded.tokenizer
    journey = journey_data(
        run.ids, [display_token(tok) for tok in run.tokens], run.logits, run.trace, loaded.config,
        vocab_label=lambda i: token_labels(tokenizer, [i])[0],
    )
    labels = {name: t(f"journey.{name}") for name in LABEL_KEYS}
    kind_key = f"overview.kind.{loaded.config.positional}"  # the Overview's own names for the kinds
    kind = t(kind_key)
    labels["pos_added"] = t("journey.pos_added", kind=kind if not kind.startswith("⟦") else loaded.config.positional)
    pair = _coref_pair(lang)
    labels["coref"] = t("journey.coref", pronoun="它" if lang == "zh" else "it", fruit=pair.fruit, container=pair.container)
    return {
        "journey": journey,
        "labels": labels,
        "pages": _pages(),
        "knobs": _sampling_knobs(),
        "seed": int(seed),
        "presenter": bool(presenter),
        "focus": _focus(journey, list(run.tokens), run.text),
        "coref": pair.key,
        "autoplay": st.session_state.pop(AUTOPLAY, None),
    }


def _clamp(value: Any, low: float, high: float, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return kind(min(max(value, low), high))


def _handle(action: Any, run: Any, loaded: Any, lang: str) -> None:
    """Act on a message from the picture; anything malformed is ignored."""
    if not isinstance(action, dict):
        return
    kind = action.get("kind")
    if kind == "open":
        page_id = action.get("page")
        if isinstance(page_id, str) and page_id in set(_pages().values()):
            st.switch_page(nav.page_by_id(page_id).path)
    elif kind == "generate":
        token_id = action.get("id")
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < loaded.config.vocab_size:
            return
        if action.get("n") != len(run.ids):  # a click on a picture of an older prompt
            return
        knobs = action.get("knobs")
        if isinstance(knobs, dict):
            for name, low, high, kind_ in (("temperature", 0.0, 3.0, float), ("top_k", 0, 10_000_000, int),
                                            ("top_p", 0.05, 1.0, float)):
                value = _clamp(knobs.get(name), low, high, kind_)
                if value is not None:
                    state.put(f"sampling_{name}", value)
        state.put(state.PROMPT, run.text + loaded.tokenizer.decode([token_id]))
        st.session_state[AUTOPLAY] = f"gen-{len(run.ids) + 1}-{token_id}"
        st.rerun(scope="app")
    elif kind == "preset":
        pair = _coref_pair(lang)
        if action.get("key") != pair.key:
            return
        text = pair.to_container.prompt if run.text == pair.to_fruit.prompt else pair.to_fruit.prompt
        state.put(state.PROMPT, text)
        st.rerun(scope="app")


@st.fragment
def journey(run: Any, loaded: Any, *, lang: str, seed: int, presenter: bool) -> None:
    """Draw the picture for ``run`` (a ``ui.resources.PromptRun``) and act on its clicks."""
    data = build_data(run, loaded, lang=lang, seed=seed, presenter=presenter)
    result = _mount(key="journey", data=data, on_action_change=lambda: None, width="stretch", height="content")
    action = getattr(result, "action", None)
    if action is not None:
        _handle(action, run, loaded, lang)

