"""Logits & sampling page: renders in both languages, the knobs do what the seeds say.

The knobs answer in the browser (``ui.components.sampling_lab``): what they redraw there (the
before/after bars, the metrics after the knobs, the cut summary, the step table) is tested in
Chromium against core (tests/e2e/test_sampling_knobs.py). Here: the data the component gets, and
what the server does with the knob values a "Draw" press carries (checked, committed, drawn).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema
from streamlit.testing.v1 import AppTest

from tests.app.components import component_data, press
from tests.app.conftest import assert_clean, chart_title, open_page, vega_charts_by_place, vega_spec

PAGE = "logits_sampling"
WIDGET_KEYS: tuple[str, ...] = ()  # every control of this page answers in the browser now
LAB = "logits_sampling_knobs"
SOFTMAX = "logits_sampling_softmax"  # the softmax section: "Tokens to show (N)" in the browser
DRAWS = "logits_sampling_draws"  # the seeded draws: "Number of draws N" in the browser
DEFAULT_KNOBS = {"sampling_temperature": 1.0, "sampling_top_k": 0, "sampling_top_p": 1.0}


def _draw(at: AppTest, **knobs: object) -> AppTest:
    """Press "Draw" with these knob values (the others at their defaults), as the browser does."""
    press(at, LAB, {"kind": "draw", "knobs": {**DEFAULT_KNOBS, **{f"sampling_{k}": v for k, v in knobs.items()}}})
    assert_clean(at)
    return at


def _knob_values(at: AppTest) -> dict[str, object]:
    return {k["name"]: k["value"] for k in component_data(at, LAB)["knobs"]}


def _assert_valid_charts(at: AppTest) -> None:
    """The pages skip Altair's validation at run time (speed), so every spec is checked here."""
    schema = load_schema()
    charts = at.get("vega_lite_chart")
    assert charts
    for chart in charts:
        validate_jsonschema(json.loads(chart.proto.spec), schema)


def _metric(at: AppTest, label: str) -> str:
    for metric in at.metric:
        if metric.label == label:
            return metric.value
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def _charts(at: AppTest) -> list[dict]:
    return [vega_spec(chart) for chart in at.get("vega_lite_chart")]


def _chart_titled(at: AppTest, words: str) -> dict:
    for spec in _charts(at):
        if words in chart_title(spec):
            return spec
    raise AssertionError(f"no chart whose title contains {words!r}")


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    keys = {getattr(w, "key", None) for w in [*at.slider, *at.number_input]}
    assert set(WIDGET_KEYS) <= keys
    assert not {"logits_sampling_temperature", "logits_sampling_top_k", "logits_sampling_top_p",
                "logits_sampling_top_n", "logits_sampling_n_samples"} & keys  # in the browser now
    assert len(at.get("vega_lite_chart")) >= 2  # lens grid, lens line (the top-N bars and the draws: the browser's)
    assert component_data(at, DRAWS)["labels"]["n_samples"] == t_(lang, "logits_sampling.n_samples")
    softmax = component_data(at, SOFTMAX)
    assert softmax["labels"]["top_n"] == t_(lang, "logits_sampling.top_n")
    assert not [v for v in softmax["labels"].values() if "⟦" in v], "a softmax label is missing"
    title = "Logits" if lang == "en" else "Logits 与采样"
    assert title in at.title[0].value
    assert not at.warning and not at.error
    _assert_valid_charts(at)
    data = component_data(at, LAB)
    assert data["labels"]["temperature"] == t_(lang, "logits_sampling.temperature")
    assert not [v for v in data["labels"].values() if "⟦" in v], "a knob label is missing"
    assert [a["kind"] for a in data["actions"]] == ["draw"]
    assert data["labels"]["stale"] == t_(lang, "logits_sampling.draw.stale")
    assert data["labels"]["top_k_help"].startswith(t_(lang, "logits_sampling.top_k.help").split("{")[0])


def test_the_component_gets_the_exact_logits_and_the_shown_tokens() -> None:
    import base64

    import numpy as np

    at = open_page(PAGE, lang="en")
    data = component_data(at, LAB)
    sent = np.frombuffer(base64.b64decode(data["logits"]), dtype="<f4")
    from ui.resources import run_prompt

    run = run_prompt("classic", at.session_state["prompt"])
    np.testing.assert_array_equal(sent, run.logits[-1].astype(np.float32))  # bit for bit
    from core.engine.sampling import softmax

    probs = softmax(sent.astype(np.float64))
    # the 30 most probable: the browser shows the first N (the softmax section's, 10 by default)
    assert data["shown"]["ids"] == [int(i) for i in np.lexsort((np.arange(sent.size), -probs))[:30]]
    assert data["top_n"]["value"] == 10
    assert data["top_label"] == data["shown"]["labels"][0]


def test_the_softmax_section_gets_the_top_30_as_core_computes_them() -> None:
    """The browser shows the first N of these and 1 − their sum as the rest (tests/e2e checks
    its numbers); here: what it gets is core's softmax and entropy of the whole vocabulary."""
    import numpy as np

    from core.engine.sampling import entropy_bits, softmax
    from ui.resources import run_prompt

    at = open_page(PAGE, lang="en")
    data = component_data(at, SOFTMAX)
    logits = run_prompt("classic", at.session_state["prompt"]).logits[-1].astype(np.float64)
    probs = softmax(logits)
    order = np.lexsort((np.arange(logits.size), -probs))[:30]
    assert data["shown"]["ids"] == [int(i) for i in order]
    assert data["probs"] == [float(p) for p in probs[order]]
    assert data["logits"] == [float(v) for v in logits[order]]
    assert data["entropy"] == entropy_bits(probs) and data["vocab_size"] == logits.size
    assert {k: data["top_n"][k] for k in ("name", "value", "default", "min", "max")} == {
        "name": "logits_sampling_top_n", "value": 10, "default": 10, "min": 5, "max": 30}
    assert component_data(at, LAB)["top_n"]["name"] == "logits_sampling_top_n"  # the knobs' bars follow N


@pytest.mark.parametrize(("sent", "kept"), [(12, 12), (30, 30), (4, 10), (31, 10), ("seven", 10), (True, 10), (7.5, 10), (None, 10)])
def test_draw_commits_the_top_n_it_carries_and_rejects_bad_ones(sent: object, kept: int) -> None:
    at = open_page(PAGE, lang="en")
    press(at, LAB, {"kind": "draw", "knobs": {**DEFAULT_KNOBS, "logits_sampling_top_n": sent}})
    assert_clean(at)
    from ui import state

    durable = state.durable_key("logits_sampling_top_n")
    assert (at.session_state[durable] if durable in at.session_state else 10) == kept  # 10: never stored, the default
    assert component_data(at, SOFTMAX)["top_n"]["value"] == kept


@pytest.mark.parametrize(("linked", "shown"), [("17", 17), ("300", 10), ("x", 10)])
def test_a_linked_top_n_reaches_the_browser_and_a_tampered_one_falls_back(linked: str, shown: int) -> None:
    from tests.app.conftest import APP

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"logits_sampling_top_n": linked})
    at.run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert not at.exception
    assert component_data(at, SOFTMAX)["top_n"]["value"] == shown
    assert component_data(at, LAB)["top_n"]["value"] == shown


def test_defaults_show_the_full_vocabulary_and_the_seed_framing() -> None:
    at = open_page(PAGE, lang="en", prompt="法国的首都是")
    assert_clean(at)
    # The tail bar's words say how many other tokens the softmax covers (the browser fills in N).
    softmax = component_data(at, SOFTMAX)
    assert softmax["labels"]["tail_label"] == "(all other {n} tokens)"
    assert softmax["labels"]["chart_title"].startswith("Top {n} of {vocab}")
    seed_table = next(f.value for f in at.dataframe if "Textbook: probability" in f.value.columns)
    assert list(seed_table["Word"]) == ["巴黎", "伦敦", "柏林", "苹果"]
    assert list(seed_table["Textbook: probability"])[:2] == ["0.86", "0.04"]
    # The live model tells the same story: 巴黎 first, 伦敦 far lower.
    live = dict(zip(seed_table["Word"], seed_table["Live: probability"].astype(float)))
    assert list(seed_table["Live: rank"])[0] == 1
    assert live["巴黎"] > 0.5 > live["伦敦"]
    assert softmax["shown"]["labels"][0] == "巴黎"  # the browser's "Most probable next token"
    # Knob defaults: T = 1, top-k off, top-p 1 (each default stays out of the link).
    assert _knob_values(at) == DEFAULT_KNOBS
    assert {k["name"]: k["default"] for k in component_data(at, LAB)["knobs"]} == DEFAULT_KNOBS
    assert component_data(at, LAB)["top_label"] == "巴黎"


def test_draw_commits_the_knobs_it_carries() -> None:
    at = open_page(PAGE, lang="en")
    _draw(at, temperature=0.0, top_k=3, top_p=0.5)
    assert at.session_state["sampling_temperature"] == 0.0
    assert at.session_state["sampling_top_k"] == 3
    assert at.session_state["sampling_top_p"] == 0.5
    assert _knob_values(at) == {"sampling_temperature": 0.0, "sampling_top_k": 3, "sampling_top_p": 0.5}
    assert dict(at.query_params) == {"sampling_temperature": "0", "sampling_top_k": "3", "sampling_top_p": "0.5"}
    assert any("These draws used T = 0.00, top-k = 3, top-p = 0.50." == c.value for c in at.caption)


@pytest.mark.parametrize("sent", [
    {"sampling_temperature": "hot", "sampling_top_k": -5, "sampling_top_p": 7},
    {"sampling_temperature": float("nan"), "sampling_top_k": True, "sampling_top_p": [0.5]},
    {"sampling_temperature": 1e308, "sampling_top_k": 2.5, "sampling_top_p": 0.0},
])
def test_bad_knob_values_from_the_client_fall_back_to_the_defaults(sent: dict) -> None:
    at = open_page(PAGE, lang="en")
    _draw(at, temperature=2.0, top_k=7, top_p=0.9)
    press(at, LAB, {"kind": "draw", "knobs": sent})
    assert_clean(at)
    assert _knob_values(at) == DEFAULT_KNOBS
    assert at.toast  # the usual translated note says a value was reset


@pytest.mark.parametrize("action", [
    None, "draw", [], {"kind": "next", "knobs": {"sampling_temperature": 0.5}}, {"kind": "../x"},
    {"kind": "draw", "knobs": "sampling_temperature=0"}, {"kind": "draw", "knobs": {"prompt": "x", "seed": 5}},
])
def test_malformed_presses_change_nothing(action: object) -> None:
    at = open_page(PAGE, lang="en")
    prompt = at.session_state["prompt"]
    press(at, LAB, action)
    assert_clean(at)
    assert _knob_values(at) == DEFAULT_KNOBS
    assert at.session_state["prompt"] == prompt and at.session_state["seed"] == 0


def test_the_top_k_range_ends_at_the_vocabulary() -> None:
    at = open_page(PAGE, lang="en")
    _draw(at, top_k=10_000_000)  # allowed by the declaration, more than this model's vocabulary
    vocab = component_data(at, LAB)["knobs"][1]["max"]
    assert at.session_state["sampling_top_k"] == vocab == 5938


def test_knobs_are_shared_with_the_generation_page() -> None:
    at = open_page(PAGE, lang="en")
    _draw(at, temperature=0.35)
    assert at.session_state["sampling_temperature"] == pytest.approx(0.35)
    at.switch_page("pages/generation.py").run()
    assert_clean(at)
    assert _knob_values_of(at, "generation_knobs")["sampling_temperature"] == pytest.approx(0.35)


def _knob_values_of(at: AppTest, key: str) -> dict[str, object]:
    return {k["name"]: k["value"] for k in component_data(at, key)["knobs"]}


def t_(lang: str, key: str) -> str:
    from ui.i18n import translate

    return translate(key, lang)


def _draws_of(at: AppTest) -> dict:
    return component_data(at, DRAWS)


def test_the_draws_are_cores_for_the_committed_knobs_and_the_seed() -> None:
    """The browser gets sample(final, n=1000, seed) for the committed knobs; any N draws with that
    seed are their first N (tests/unit checks that property; tests/e2e the histogram drawn)."""
    import numpy as np

    from core.engine.sampling import sample, sampling_steps
    from ui.resources import run_prompt

    at = open_page(PAGE, lang="en")
    logits = run_prompt("classic", at.session_state["prompt"]).logits[-1].astype(np.float64)
    for knobs in ({}, {"temperature": 0.5, "top_k": 7}, {"temperature": 1.7, "top_p": 0.6}):
        if knobs:
            _draw(at, **knobs)
        data = _draws_of(at)
        knob = {**DEFAULT_KNOBS, **{f"sampling_{k}": v for k, v in knobs.items()}}
        final = sampling_steps(logits, knob["sampling_temperature"], knob["sampling_top_k"] or None,
                               knob["sampling_top_p"]).final_probs
        assert data["draws"] == [int(i) for i in sample(final, n=1000, seed=0)]
        order = np.lexsort((np.arange(final.size), -final))
        assert data["top"] == [int(i) for i in order[final[order] > 0][:12]]
        assert data["probs"] == {str(i): float(final[i]) for i in sorted(set(data["top"]) | set(data["draws"]))}
        assert data["seed"] == 0 and data["bars"] == 12
    at.number_input(key="w_seed").set_value(5).run()  # the sidebar's seed
    assert_clean(at)
    assert _draws_of(at)["seed"] == 5
    assert _draws_of(at)["draws"] == [int(i) for i in sample(final, n=1000, seed=5)]


def test_greedy_draws_all_hit_the_top_token() -> None:
    at = open_page(PAGE, lang="en")
    _draw(at, temperature=0.0)
    data = _draws_of(at)
    assert set(data["draws"]) == {data["top"][0]} and data["top"] == data["top"][:1]


@pytest.mark.parametrize(("sent", "kept"), [(300, 300), (1, 1), (0, 200), (1001, 200), ("lots", 200)])
def test_draw_commits_the_number_of_draws_it_carries(sent: object, kept: int) -> None:
    at = open_page(PAGE, lang="en")
    press(at, LAB, {"kind": "draw", "knobs": {**DEFAULT_KNOBS, "logits_sampling_n_samples": sent}})
    assert_clean(at)
    assert _draws_of(at)["n_samples"]["value"] == kept
    assert component_data(at, LAB)["extra"][0]["value"] == kept


def test_logit_lens_has_one_row_per_layer_plus_the_embedding() -> None:
    at = open_page(PAGE, lang="en")
    spec = _chart_titled(at, "Top 5 tokens per layer")
    text = json.dumps(spec, ensure_ascii=False)
    assert "embedding (before block 0)" in text
    assert "block 0" in text and "block 1" in text


def test_bad_prompt_gets_a_message_not_a_crash(lang: str) -> None:
    for bad in ("", "\x00\x01", "y" * 5000):
        at = open_page(PAGE, lang=lang, prompt=bad)
        assert not at.exception
        assert at.warning


def test_modern_model_renders_too() -> None:
    at = open_page(PAGE, lang="en", prompt="法国的首都是")
    at.session_state["model"] = "modern"
    at.run()
    assert_clean(at)
    assert "modern" in at.selectbox(key="w_model").value
    spec = _chart_titled(at, "Top 5 tokens per layer")
    assert "block 3" in json.dumps(spec, ensure_ascii=False)


def test_the_temperature_changes_the_draws_not_the_page_layout() -> None:
    """Draws with another temperature change the draws the browser gets, not the page's charts."""
    at = open_page(PAGE, lang="en")
    seen = {}
    for temperature in (1.0, 1.05, 0.0, 2.5):
        _draw(at, temperature=temperature)
        seen[temperature] = (list(vega_charts_by_place(at)), tuple(_draws_of(at)["draws"]))
    assert len({repr(places) for places, _ in seen.values()}) == 1
    assert len({draws for _, draws in seen.values()}) == len(seen)
