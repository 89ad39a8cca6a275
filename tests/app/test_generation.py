"""Generation & KV cache page: stepping, the cache accounting, the memory calculator."""

from __future__ import annotations

import json

import pytest
import torch
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema
from streamlit.testing.v1 import AppTest

import core
from core.engine.generation import GenerationSettings, generate
from tests.app.components import component_data, press
from core.lessons.kv_memory import MODEL_PRESETS
from tests.app.conftest import APP, assert_clean, chart_title, open_page
from ui import state as durable
from ui.i18n import translate

PAGE = "generation"
MEMORY = "generation_kv_calculator"  # the KV-cache memory calculator (ui.components.calculators)
LAB = "generation_knobs"  # the knobs' preview with Next token / Run / Reset (ui.components.sampling_lab)


def _press(at: AppTest, kind: str, **knobs: object) -> AppTest:
    """Press a button of the preview, carrying the knobs as shown (the committed ones, changed by ``knobs``)."""
    shown = {k["name"]: k["value"] for k in component_data(at, LAB)["knobs"]}
    press(at, LAB, {"kind": kind, "knobs": {**shown, **{f"sampling_{k}": v for k, v in knobs.items()}}})
    return at


def _knobs(at: AppTest) -> dict[str, object]:
    return {k["name"]: k["value"] for k in component_data(at, LAB)["knobs"]}


def _disabled(at: AppTest, kind: str) -> bool:
    return next(a["disabled"] for a in component_data(at, LAB)["actions"] if a["kind"] == kind)


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


def _next(at: AppTest, times: int = 1) -> AppTest:
    for _ in range(times):
        _press(at, "next")
    assert_clean(at)
    return at


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    data = component_data(at, LAB)
    assert [a["kind"] for a in data["actions"]] == ["next", "run", "reset"]
    assert [k["name"] for k in data["knobs"]] == ["sampling_temperature", "sampling_top_k", "sampling_top_p"]
    assert not [v for v in data["labels"].values() if "⟦" in v], "a knob label is missing"
    assert at.slider(key="generation_max_new")
    title = "Generation" if lang == "en" else "生成"
    assert title in at.title[0].value


def _calculator(at: AppTest) -> tuple[dict, dict[str, object]]:
    """The memory calculator's data as sent to the browser and its knobs as {name: value}."""
    data = component_data(at, MEMORY)
    return data, {k["name"].removeprefix("generation_kv_"): k["value"] for k in data["knobs"]}


def test_calculator_starts_from_the_seed_example(lang: str) -> None:
    """The seeds' worked example (Llama-4-Scout-like: 40.96 MB a layer, 1.97 GB in all, computed in
    the browser: tests/unit/test_calculators_math.py) is the calculator's first view."""
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    data, values = _calculator(at)
    assert values == {"preset": "llama4_scout_like", "layers": 48, "heads": 40, "kv_heads": 8, "head_dim": 128,
                      "tokens": 10_000, "batch": 1, "dtype": "fp16"}
    assert [p["key"] for p in data["presets"]] == [*MODEL_PRESETS, "__live__"]
    live = data["presets"][-1]
    config = core.load_builtin("classic").config  # this app's model (the default)
    assert (live["layers"], live["heads"], live["head_dim"], live["tokens"]) == (config.n_layer, config.n_head,
                                                                                  config.d_head, config.n_ctx)
    assert not [v for v in data["labels"].values() if "⟦" in v], "a label is missing"
    assert data["labels"]["dtype_option"] == translate("generation.memory.dtype_option", lang)


def test_calculator_limits_links_and_crafted_values() -> None:
    at = open_page(PAGE, lang="en")
    data, _ = _calculator(at)
    for field, high in data["limits"].items():  # the browser's boxes accept what a link may carry
        spec = durable.SPECS[f"generation_kv_{field}"]
        assert spec.check(high) == high and spec.check(1) == 1
        with pytest.raises(durable.Invalid):
            spec.check(high + 1)
    # A link: the preset and the changed numbers come back; the preset's own values are the defaults.
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"generation_kv_preset": "gpt2_small", "generation_kv_tokens": "4096", "generation_kv_batch": "3",
                            "generation_kv_dtype": "int4"})
    at.run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    data, values = _calculator(at)
    assert values == {"preset": "gpt2_small", "layers": 12, "heads": 12, "kv_heads": 12, "head_dim": 64, "tokens": 4096,
                      "batch": 3, "dtype": "int4"}
    defaults = {k["name"]: k["default"] for k in data["knobs"]}
    assert defaults["generation_kv_tokens"] == 1024 and defaults["generation_kv_layers"] == 12
    assert {"generation_kv_preset": "gpt2_small", "generation_kv_tokens": "4096"}.items() <= dict(at.query_params).items()
    at.switch_page("app.py").run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert _calculator(at)[1] == values  # a page change keeps them
    # Crafted values (a tampered session or link): each falls back to its default with a note.
    for name, value in {"preset": "../../x", "tokens": 10**12, "batch": True, "dtype": "fp1", "kv_heads": float("nan")}.items():
        at.session_state[f"kept.generation_kv_{name}"] = value
    at.run()
    assert_clean(at)
    _, values = _calculator(at)
    assert values == {"preset": "llama4_scout_like", "layers": 48, "heads": 40, "kv_heads": 8, "head_dim": 128,
                      "tokens": 10_000, "batch": 1, "dtype": "fp16"}
    assert at.toast


def test_next_token_grows_the_cache_by_one_per_step() -> None:
    at = open_page(PAGE, lang="en")
    assert at.session_state["gen_steps"] == []
    prompt_len = len(at.session_state["gen_state"]["prompt_ids"])
    for step in range(1, 4):
        _next(at)
        steps = at.session_state["gen_steps"]
        assert len(steps) == step
        assert steps[-1]["cache_len"] == [prompt_len + step - 1] * steps[-1]["n_layer"]
        assert _metric(at, "Cache length (each layer)") == str(prompt_len + step - 1)
        # With the cache: prompt + one per later step. Without: the whole sequence every step.
        assert _metric(at, "K/V computed so far · with cache") == f"{prompt_len + step - 1:,}"
        uncached = sum(prompt_len + s - 1 for s in range(1, step + 1))
        assert _metric(at, "K/V computed so far · without") == f"{uncached:,}"
    json.dumps([at.session_state[k] for k in ("gen_signature", "gen_state", "gen_steps")])  # plain data only


def test_run_stops_at_the_budget_or_end_of_text_and_matches_core_generate() -> None:
    at = open_page(PAGE, lang="en")
    at.slider(key="generation_max_new").set_value(8).run()
    _press(at, "run", temperature=0.0)  # Run carries the knobs as the browser shows them
    assert_clean(at)
    assert at.session_state["sampling_temperature"] == 0.0
    state = at.session_state["gen_state"]
    assert state["stop_reason"] in ("eos", "max_new_tokens", "context_full")
    assert 1 <= len(state["generated_ids"]) <= 8
    assert at.success  # the stop reason is said in words
    _assert_valid_charts(at)  # every chart of a finished generation, and the calculator's
    assert _disabled(at, "next") and _disabled(at, "run") and not _disabled(at, "reset")
    # Greedy generation is deterministic: the page wrote what core.generate writes.
    loaded = core.load_builtin("classic")
    expected, _ = generate(loaded.model, state["prompt_ids"], loaded.tokenizer.eot_id,
                           GenerationSettings(temperature=0.0, max_new_tokens=8))
    assert state["generated_ids"] == list(expected.generated_ids)
    _press(at, "reset")
    assert at.session_state["gen_steps"] == []
    assert not _disabled(at, "next")
    _press(at, "next")  # a press of a disabled button (a stale or crafted message) does nothing:
    _press(at, "run")  # here both are enabled again, so these write
    assert at.session_state["gen_steps"]


def test_changing_a_knob_resets_and_says_so() -> None:
    """Knobs move in the browser; Next carries them: new values start the text over, said once."""
    at = open_page(PAGE, lang="en")
    _next(at, 2)
    assert len(at.session_state["gen_steps"]) == 2
    _press(at, "next", top_p=0.8)
    assert_clean(at)
    assert at.session_state["sampling_top_p"] == 0.8
    assert len(at.session_state["gen_steps"]) == 1  # started over from the prompt, then one step
    assert at.session_state["gen_state"]["settings"]["top_p"] == 0.8
    assert any("started over" in info.value for info in at.info)
    _next(at)
    assert len(at.session_state["gen_steps"]) == 2
    assert not any("started over" in info.value for info in at.info)
    _press(at, "reset")
    assert at.session_state["gen_steps"] == []


def test_presses_with_bad_or_stale_values_are_handled() -> None:
    at = open_page(PAGE, lang="en")
    _press(at, "next", temperature="hot", top_k=-1, top_p=3)  # a tampered client
    assert_clean(at)
    assert _knobs(at) == {"sampling_temperature": 1.0, "sampling_top_k": 0, "sampling_top_p": 1.0}
    assert at.toast  # the usual translated note: a value was reset
    assert len(at.session_state["gen_steps"]) == 1  # the step still ran, with the defaults
    for action in (None, [], {"kind": "draw"}, {"kind": "next; rm"}, {"knobs": {"sampling_top_k": 3}}):
        press(at, LAB, action)
        assert_clean(at)
    assert len(at.session_state["gen_steps"]) == 1 and _knobs(at)["sampling_top_k"] == 0
    at.slider(key="generation_max_new").set_value(1).run()
    _press(at, "run", temperature=0.0)
    assert at.session_state["gen_state"]["stop_reason"] is not None
    _press(at, "next")  # disabled now: ignored
    assert len(at.session_state["gen_steps"]) == 1


def test_the_preview_is_the_next_steps_distribution() -> None:
    """The preview's logits are the ones the next step draws from: step 1's after the prompt,
    step 2's after the first new token (the drawn token's probability under the knobs matches)."""
    import base64

    import numpy as np

    from core.engine.sampling import next_token_distribution

    at = open_page(PAGE, lang="en")
    for _ in range(2):
        data = component_data(at, LAB)
        logits = np.frombuffer(base64.b64decode(data["logits"]), dtype="<f4").astype(np.float64)
        _press(at, "next", temperature=0.7, top_k=20)
        step = at.session_state["gen_steps"][-1]
        final = next_token_distribution(logits, 0.7, 20, 1.0)
        assert final[step["token_id"]] == pytest.approx(step["prob"], abs=1e-5)


def test_causal_mask_follows_the_chosen_step() -> None:
    at = open_page(PAGE, lang="en")
    _next(at, 3)
    prompt_len = len(at.session_state["gen_state"]["prompt_ids"])
    titles = [chart_title(json.loads(c.proto.spec)) for c in at.get("vega_lite_chart")]
    assert f"Causal mask at step 3 ({prompt_len + 2} positions)" in titles
    at.slider(key="generation_mask_step").set_value(1).run()
    titles = [chart_title(json.loads(c.proto.spec)) for c in at.get("vega_lite_chart")]
    assert f"Causal mask at step 1 ({prompt_len} positions)" in titles


def test_the_shared_model_is_not_changed_by_generation() -> None:
    loaded = core.load_builtin("classic")
    at = open_page(PAGE, lang="en")
    from ui.resources import get_model

    shared = get_model("classic").model
    before = {name: p.detach().clone() for name, p in shared.state_dict().items()}
    _press(at, "run")
    assert_clean(at)
    after = shared.state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[name], after[name]) for name in before)
    assert loaded.config == shared.config


@pytest.mark.parametrize("bad", ["", "\x00\x01", "z" * 5000])
def test_bad_prompt_gets_a_message_not_a_crash(bad: str) -> None:
    at = open_page(PAGE, lang="en", prompt=bad)
    assert not at.exception
    assert at.warning


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_prompt_longer_than_the_context_still_generates(lang: str) -> None:
    """[W2-E] 4: the prompt is cut to n_ctx − 1 tokens (said in the page's language), so one
    place stays free and generation can always write a token."""
    from core.engine.prompt import clean_prompt
    from ui.i18n import translate

    prompt = "hello " * 300  # far more tokens than n_ctx
    loaded = core.load_builtin("classic")
    n_ctx, n = loaded.config.n_ctx, len(loaded.tokenizer.encode(clean_prompt(prompt).text))
    at = open_page(PAGE, lang=lang, prompt=prompt)
    assert_clean(at)
    said = translate("prompt.truncated", lang, n=n, kept=n_ctx - 1, n_ctx=n_ctx)
    assert said in [i.value for i in at.info], [i.value for i in at.info]
    assert not at.warning, [w.value for w in at.warning]
    assert not _disabled(at, "next")
    _next(at, 1)
    assert len(at.session_state["gen_steps"]) == 1
    assert _calculator(at)[1]["layers"] == 48  # the calculator is still drawn (its numbers: in the browser)


def test_modern_model_generates_and_changing_model_resets() -> None:
    at = open_page(PAGE, lang="en")
    _next(at, 2)
    at.session_state["model"] = "modern"
    at.run()
    assert_clean(at)
    assert at.session_state["gen_steps"] == []  # a new model starts the text over
    assert any("started over" in info.value for info in at.info)
    _next(at, 2)
    assert len(at.session_state["gen_steps"]) == 2


def _vega_by_title(at: AppTest, words: str) -> dict:
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if words in chart_title(spec):
            return spec
    raise AssertionError(f"no chart titled with {words!r}")


def _encodings(spec: dict) -> list[dict]:
    layers = spec.get("layer", [spec])
    return [layer.get("encoding", {}) for layer in layers] + [spec.get("encoding", {})]


def test_probability_axes_end_at_one_and_timeline_labels_do_not_overlap() -> None:
    at = open_page(PAGE, lang="en")
    _press(at, "run")
    assert_clean(at)
    _assert_valid_charts(at)
    timeline = _vega_by_title(at, translate_en("generation.chart.timeline.title"))
    x = next(e["x"] for e in _encodings(timeline) if "x" in e)
    assert x["field"] == "tick" and x["axis"]["labelOverlap"] == "greedy"  # tokens as rotated axis labels
    assert not any(layer.get("mark", {}).get("type") == "text" for layer in timeline.get("layer", []))
    for spec in (timeline, _vega_by_title(at, "the five most likely tokens")):
        domains = [e[c]["scale"]["domain"] for e in _encodings(spec) for c in ("x", "y")
                   if c in e and isinstance(e[c], dict) and "domain" in e[c].get("scale", {})]
        assert domains and all(d[1] <= 1.0 for d in domains), domains
    words = _calculator(at)[0]["labels"]  # the growth chart is drawn in the browser (ui.components.calculators)
    assert "∝" in words["growth_title"] and "straight line" not in words["growth_title"]
    assert "slope 1" in words["growth_caption"]  # the caption says what the log-log axes show


def translate_en(key: str, **kw: object) -> str:
    from ui.i18n import translate

    return translate(key, "en", **kw)
