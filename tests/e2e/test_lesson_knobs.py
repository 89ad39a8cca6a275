"""In real Chromium: the knobs the Positional-encoding and Self-attention pages answer in the
browser (ui.components.lessons) give the same numbers as core.lessons on random cases, and moving
them — by mouse, keyboard or typing — sends no websocket frame to the server."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from core.lessons import attention_math as am
from core.lessons import positional
from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

pytestmark = pytest.mark.e2e

BASES = (100, 1000, 10000, 100000, 500000, 1000000)
TABLE = "[data-testid=pe-table]"
VECTOR = "[data-testid=pe-vector]"
RELATIVE = "[data-testid=pe-relative]"
STEPS = "[data-testid=sa-steps]"
LAB = "[data-testid=sa-lab]"


def count_frames(page: Page) -> list[int]:
    """Messages the browser sends to the server (each rerun request is one)."""
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def open_page(page: Page, url: str, ready: str) -> None:
    page.goto(url)
    wait_for_app(page)
    expect(page.locator(ready).first).to_be_visible(timeout=90_000)
    wait_for_app(page)
    page.wait_for_timeout(1000)  # the last status messages of the first run
    assert_no_error(page)


def set_input(page: Page, selector: str, value: object) -> None:
    """Set a control's value as a student's input event does (range, number or text)."""
    page.locator(selector).evaluate(
        "(input, v) => { input.value = String(v); input.dispatchEvent(new Event('input', { bubbles: true })); }", value)


def cell_values(page: Page, selector: str, column: int) -> list[float]:
    return [float(v) for v in page.locator(f"{selector} tbody tr td:nth-child({column + 1})").evaluate_all(
        "cells => cells.map(c => c.dataset.value)")]


def cell_texts(page: Page, selector: str, column: int) -> list[str]:
    return page.locator(f"{selector} tbody tr td:nth-child({column + 1})").all_text_contents()


def signed(value: float, digits: int = 3) -> str:
    """The page's number format (ui/sections/positional_encoding.py before the move)."""
    text = f"{value:.{digits}f}"
    if text.startswith("-"):
        text = "−" + text[1:]
    return "0." + "0" * digits if text == "−0." + "0" * digits else text


# --- positional encoding ---------------------------------------------------------------------


def check_positional(page: Page, d: int, base: int, pos: int, offset: int) -> None:
    """The vector table and the relative check ≡ core.lessons.positional, numbers and text."""
    vector = positional.sinusoidal_vector(pos, d, float(base))
    shown = cell_values(page, f"{VECTOR} .pe-vector", 3)
    np.testing.assert_allclose(shown, vector, rtol=0, atol=1e-9)
    assert cell_texts(page, f"{VECTOR} .pe-vector", 3) == [signed(v) for v in vector]
    divisors = positional.pair_divisors(d, float(base))
    assert cell_texts(page, f"{VECTOR} .pe-vector", 2) == [
        f"{'sin' if i % 2 == 0 else 'cos'}({pos} / {divisors[i // 2]:,.4g})" for i in range(d)]
    if pos + offset < 0:
        expect(page.locator(f"{RELATIVE} .tl-warning")).to_be_visible()
        return
    check = positional.check_relative_position(pos, offset, d, float(base))
    for column, expected in ((1, check.pe_position), (2, check.rotated), (3, check.pe_target)):
        np.testing.assert_allclose(cell_values(page, f"{RELATIVE} .pe-relative", column), expected, rtol=0, atol=1e-9)
    error = float(page.locator(f"{RELATIVE} .tl-metric").get_attribute("data-value"))
    assert error < 1e-9 and abs(error - check.max_abs_error) < 1e-9
    shown_dims = min(d, 32)
    matrix = json.loads(page.locator(f"{RELATIVE} canvas").get_attribute("data-values"))
    np.testing.assert_allclose(np.array(matrix).reshape(shown_dims, shown_dims),
                               check.matrix[:shown_dims, :shown_dims], rtol=0, atol=1e-9)


def test_positional_knobs_match_core_on_random_cases_without_a_frame(page: Page, app_url: str) -> None:
    sent = count_frames(page)
    open_page(page, f"{app_url}/positional_encoding", VECTOR)
    # The seeds' row with the defaults (d = 8, pos = 3, base 10,000).
    expect(page.locator(VECTOR).get_by_text("[0.141, −0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000]")).to_be_visible()
    check_positional(page, 8, 10000, 3, 2)
    before = sent[0]
    rng = random.Random(43)
    for _ in range(12):
        d, base = 2 * rng.randint(2, 256), rng.choice(BASES)
        pos, offset = rng.choice([rng.randint(0, 60), rng.randint(0, 100_000)]), rng.randint(-1000, 1000)
        set_input(page, f"{TABLE} [data-knob=pe_d_model] input", d)
        set_input(page, f"{TABLE} [data-knob=pe_base] input", BASES.index(base))
        set_input(page, f"{VECTOR} [data-knob=pe_position] input", pos)
        set_input(page, f"{RELATIVE} [data-knob=pe_offset] input", offset)
        check_positional(page, d, base, pos, offset)
        expect(page.locator(f"{TABLE} [data-testid=pe-heatmap] .tl-chart-title")).to_have_text(
            f"Positional encoding: 64 positions × {d} dimensions (base {base:,})")
    page.wait_for_timeout(1500)
    assert sent[0] == before, "moving the knobs sent a message to the server"


def test_positional_knobs_by_keyboard_mouse_and_touch_send_nothing(page: Page, app_url: str) -> None:
    sent = count_frames(page)
    open_page(page, f"{app_url}/positional_encoding", TABLE)
    before = sent[0]
    slider = page.locator(f"{TABLE} [data-knob=pe_d_model] input")
    expect(slider).to_have_accessible_name("d_model (dimensions)")
    slider.focus()
    for _ in range(60):  # step 2: 8 → 128
        page.keyboard.press("ArrowRight")
    expect(slider).to_have_value("128")
    expect(page.locator(VECTOR).get_by_text("PE(pos = 3) with d = 128")).to_be_visible()
    check_positional(page, 128, 10000, 3, 2)
    # The mouse: a click on the track seven tenths of the way along.
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2)
    d = int(slider.input_value())
    assert d != 128 and d % 2 == 0
    check_positional(page, d, 10000, 3, 2)
    # Pairs drawn as waves: tick one more (keyboard: Space on a focused checkbox).
    box = page.locator(f"{TABLE} [data-knob=pe_pairs] input:not(:checked)").first
    box.focus()
    page.keyboard.press("Space")
    expect(page.locator(f"{TABLE} [data-testid=pe-waves] .tl-series-legend li")).to_have_count(8)
    # A typed position outside the range is refused in place, never sent.
    position = page.locator(f"{VECTOR} [data-knob=pe_position] input")
    position.fill("100001")
    expect(position).to_have_attribute("aria-invalid", "true")
    position.fill("42")
    check_positional(page, d, 10000, 42, 2)
    page.wait_for_timeout(1500)
    assert sent[0] == before, "moving the knobs sent a message to the server"
    assert_no_error(page)


def test_positional_input_to_redraw_is_fast(page: Page, app_url: str) -> None:
    """Input event → every view recomputed and redrawn (the three share d_model), in the page's own
    JavaScript; the browser's layout and paint come on top. A loose bound that only catches a
    pathology here (the machine is shared); the figure is measured by the bench on a quiet machine."""
    open_page(page, f"{app_url}/positional_encoding", TABLE)
    times = []
    for d in (64, 256, 512, 128, 8, 300, 16, 500, 32, 200):
        times.append(page.locator(f"{TABLE} [data-knob=pe_d_model] input").evaluate(
            """(input, v) => new Promise((done) => {
                const t0 = performance.now();
                input.value = String(v);
                input.dispatchEvent(new Event('input', { bubbles: true }));
                requestAnimationFrame(() => done(performance.now() - t0));
            })""", d))
    assert float(np.median(times)) < 150, times


# --- self-attention --------------------------------------------------------------------------


def weights_of(page: Page, testid: str) -> np.ndarray:
    values = json.loads(page.locator(f"{STEPS} [data-testid={testid}] canvas").get_attribute("data-values"))
    return np.array([-math.inf if v == "-Infinity" else v for v in values], dtype=float)


def test_attention_toggles_match_core_and_send_nothing(page: Page, app_url: str) -> None:
    sent = count_frames(page)
    open_page(page, f"{app_url}/self_attention", STEPS)
    steps_box = page.locator(STEPS)
    expect(steps_box).to_contain_text("Q₀ · K₁ = 1×1 + 0×2 + 2×1 = 3")
    expect(steps_box).to_contain_text("e^2 = 7.389")
    expect(steps_box).to_contain_text("= 0.155")
    expect(steps_box).to_contain_text("[1.845, 6.223, 1.733]")  # the seeds' [1.843, 6.218, 1.731] before rounding
    expect(steps_box).to_contain_text("I 15.5%, love 42.2%, you 42.2%")
    before = sent[0]
    x, w_q, w_k, w_v = am.SEED_X, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V
    for scale, causal in ((False, True), (True, True), (True, False), (False, False)):
        mask_box = page.locator(f"{STEPS} [data-knob=sa_mask] input")
        if mask_box.is_checked() != causal:
            page.locator(f"{STEPS} [data-knob=sa_mask] label").click()  # the mouse
        scale_box = page.locator(f"{STEPS} [data-knob=sa_scale] input")
        if scale_box.is_checked() != scale:
            scale_box.focus()
            page.keyboard.press("Space")  # the keyboard
        expected = am.attention_steps(x, w_q, w_k, w_v, scale=scale, causal=causal)
        np.testing.assert_allclose(weights_of(page, "sa-weights").reshape(3, 3), expected.weights, rtol=0, atol=1e-12)
        np.testing.assert_allclose(weights_of(page, "sa-output").reshape(3, 3), expected.output, rtol=0, atol=1e-12)
        for query in (2, 0):
            page.locator(f"{STEPS} [data-knob=sa_query] select").select_option(str(query))
            walk = am.row_walkthrough(expected, query)
            sm = walk.softmax
            text = page.locator(f"{STEPS} [data-testid=sa-hand-softmax]").text_content()
            assert f"= {sm.total:.3f}" in text and text.count("softmax") == 3, text
            for j in range(3):
                assert f"softmax{'₀₁₂'[j]} = {sm.exps[j]:.3f} / {sm.total:.3f} = {sm.weights[j]:.3f}" in text, text
    expect(steps_box).to_contain_text("Q₀ · K₀ = 1×0 + 0×1 + 2×1 = 2   ← I → I")
    page.locator(f"{STEPS} [data-knob=sa_mask] label").click()
    expect(steps_box).to_contain_text("[2, −∞, −∞]")  # row 0 after the mask, in the hand calculation
    page.wait_for_timeout(1500)
    assert sent[0] == before, "the toggles sent a message to the server"
    assert_no_error(page)


def test_softmax_lab_matches_core_and_explains_bad_input(page: Page, app_url: str) -> None:
    s = load_strings("en")
    sent = count_frames(page)
    open_page(page, f"{app_url}/self_attention", STEPS)
    page.get_by_role("tab", name=s["self_attention.tab.lab"]).click()
    box = page.locator(f"{LAB} [data-knob=sa_lab_scores] input")
    expect(box).to_be_visible()
    before = sent[0]
    page.locator(f"{LAB} [data-knob=sa_lab_case] select").select_option(label=s["self_attention.lab.case.negative"])
    expect(box).to_have_value("1, −2, 1")
    expect(page.locator(LAB).get_by_text(s["self_attention.lab.plain.division_by_zero"])).to_be_visible()
    rng = np.random.default_rng(43)
    for _ in range(12):
        n = int(rng.integers(1, 13))
        scores = np.round(rng.normal(0, 4, n), int(rng.integers(0, 4)))
        if rng.random() < 0.3:
            scores[rng.integers(0, n)] = -np.inf
        if np.isneginf(scores).all():
            continue
        typed = ", ".join("-inf" if np.isneginf(v) else repr(float(v)) for v in scores)
        box.fill(typed)  # a keystroke at a time would do the same: every input event recomputes
        steps = am.softmax_steps(am.parse_vector(typed))
        np.testing.assert_allclose(cell_values(page, f"{LAB} .sa-lab-softmax", 2), steps.weights, rtol=0, atol=1e-12)
        assert cell_texts(page, f"{LAB} .sa-lab-softmax", 1) == [f"{e:.3f}" for e in steps.exps]
        plain = am.plain_normalise(steps.scores)
        if plain.weights is None:
            assert page.locator(f"{LAB} .tl-error").get_attribute("data-problem") == plain.problem
        else:
            np.testing.assert_allclose(cell_values(page, f"{LAB} .sa-lab-plain", 1), plain.weights, rtol=1e-12)
    for bad, code in (("", "empty"), ("x", "not_a_number"), ("-inf, -inf", "all_masked"), ("nan", "not_finite"),
                      ("1e400", "not_finite"), ("1e7", "too_large"), (",".join(["1"] * 13), "too_many")):
        box.fill(bad)
        with pytest.raises(am.InputProblem) as problem:
            am.softmax_steps(am.parse_vector(bad))
        assert problem.value.code == code
        assert page.locator(f"{LAB} .tl-error").get_attribute("data-problem") == code, bad
    page.wait_for_timeout(1500)
    assert sent[0] == before, "the lab sent a message to the server"
    assert_no_error(page)


ROPE = "[data-testid=pe-rope]"


def test_rope_knobs_match_core_and_send_nothing(page: Page, app_url: str) -> None:
    """A RoPE model: every layer's and head's q and k are on the page; m, n, the layer and the
    head redraw in the browser with core's numbers (the model's own q and k, rotated by core)."""
    import core
    from core.engine import names

    sent = count_frames(page)
    open_page(page, f"{app_url}/positional_encoding?model=modern", ROPE)
    loaded = core.load_builtin("modern")
    _, trace = loaded.model.run_with_trace(loaded.tokenizer.encode("The capital of France is"))
    theta = loaded.model.rope_frequencies().astype(np.float64)
    before = sent[0]
    rng = random.Random(7)
    for _ in range(6):
        layer, head, m, n = rng.randrange(4), rng.randrange(4), rng.randrange(128), rng.randrange(128)
        page.locator(f"{ROPE} [data-knob=pe_rope_layer] select").select_option(str(layer))
        page.locator(f"{ROPE} [data-knob=pe_rope_head] select").select_option(str(head))
        set_input(page, f"{ROPE} [data-knob=pe_rope_m] input", m)
        set_input(page, f"{ROPE} [data-knob=pe_rope_n] input", n)
        q = trace[names.act_name("q", layer=layer)][-1, head].astype(np.float64)
        k = trace[names.act_name("k", layer=layer)][0, head].astype(np.float64)  # modern: one K head per query head
        for panel in page.locator(f"{ROPE} .tl-rope-panel").all():
            i = int(panel.get_attribute("data-pair"))
            picture = positional.rope_pair_picture(q[2 * i:2 * i + 2], k[2 * i:2 * i + 2], m, n, float(theta[i]))
            q_rot, k_rot = json.loads(panel.get_attribute("data-values"))
            np.testing.assert_allclose(q_rot, picture.q_rotated, rtol=1e-6, atol=1e-6)  # float32 trace, two runs
            np.testing.assert_allclose(k_rot, picture.k_rotated, rtol=1e-6, atol=1e-6)
            assert f"(m − n)·θ = {math.degrees((m - n) * theta[i]):.1f}°" in panel.text_content()
        spread = float(page.locator(f"{ROPE} .tl-caption[data-value]").get_attribute("data-value"))
        assert spread < 1e-9  # q·k depends on the offset only
    page.wait_for_timeout(1500)
    assert sent[0] == before, "the RoPE knobs sent a message to the server"
    assert_no_error(page)


def test_rope_panels_of_the_classic_model_match_core(page: Page, app_url: str) -> None:
    sent = count_frames(page)
    open_page(page, f"{app_url}/positional_encoding", ROPE)
    before = sent[0]
    theta = positional.rope_frequencies(32)
    q, k = positional.demo_query_key(32, seed=0)
    for m, n in ((30, 27), (0, 127), (64, 64), (5, 100)):
        set_input(page, f"{ROPE} [data-knob=pe_rope_m] input", m)
        set_input(page, f"{ROPE} [data-knob=pe_rope_n] input", n)
        panels = page.locator(f"{ROPE} .tl-rope-panel").all()
        assert [int(p.get_attribute("data-pair")) for p in panels] == [0, 4, 8, 15]
        for panel in panels:
            i = int(panel.get_attribute("data-pair"))
            picture = positional.rope_pair_picture(q[2 * i:2 * i + 2], k[2 * i:2 * i + 2], m, n, float(theta[i]))
            q_rot, k_rot = json.loads(panel.get_attribute("data-values"))
            np.testing.assert_allclose(q_rot, picture.q_rotated, rtol=0, atol=1e-12)
            np.testing.assert_allclose(k_rot, picture.k_rotated, rtol=0, atol=1e-12)
            assert float(panel.get_attribute("data-angle")) == pytest.approx(picture.angle_after, abs=1e-12)
    set_input(page, f"{ROPE} [data-knob=pe_rope_m] input", 30)
    set_input(page, f"{ROPE} [data-knob=pe_rope_n] input", 27)
    expect(page.locator(f"{ROPE} .tl-rope-panel[data-pair='0']")).to_contain_text("(m − n)·θ = 171.9°")
    scores = positional.rope_scores_by_offset(q, k, theta, [20, 50, 100], 40)
    spread = float(np.nanmax(np.nanmax(scores, axis=0) - np.nanmin(scores, axis=0)))
    shown = float(page.locator(f"{ROPE} .tl-caption[data-value]").get_attribute("data-value"))
    assert shown < 1e-9 and abs(shown - spread) < 1e-12
    page.wait_for_timeout(1500)
    assert sent[0] == before, "the RoPE knobs sent a message to the server"


MH = "[data-testid=sa-mh]"


def canvas_values(page: Page, selector: str) -> np.ndarray:
    values = json.loads(page.locator(f"{selector} canvas").get_attribute("data-values"))
    return np.array([-math.inf if v == "-Infinity" else v for v in values], dtype=float)


def test_multi_head_knobs_match_core_and_send_nothing(page: Page, app_url: str) -> None:
    s = load_strings("en")
    sent = count_frames(page)
    open_page(page, f"{app_url}/self_attention", STEPS)
    page.get_by_role("tab", name=s["self_attention.tab.mh"]).click()
    expect(page.locator(MH)).to_be_visible()
    before = sent[0]
    x, w_o = am.SEED_MULTIHEAD_X, am.random_w_o(6, 0)
    for heads, scale, causal in ((2, True, False), (3, True, True), (6, False, True), (1, False, False)):
        page.locator(f"{MH} [data-knob=sa_mh_heads] select").select_option(label=str(heads))
        for name, wanted in (("sa_mh_scale", scale), ("sa_mh_mask", causal)):
            if page.locator(f"{MH} [data-knob={name}] input").is_checked() != wanted:
                page.locator(f"{MH} [data-knob={name}] label").click()
        expected = am.multi_head_steps(x, heads, w_o=w_o, scale=scale, causal=causal)
        for h in range(heads):
            np.testing.assert_allclose(canvas_values(page, f"{MH} [data-testid=sa-mh-head-{h + 1}]").reshape(3, 3),
                                       expected.weights[h], rtol=0, atol=1e-12)
        assert page.locator(f"{MH} [data-testid^=sa-mh-head-]").count() == heads
        np.testing.assert_allclose(canvas_values(page, f"{MH} [data-testid=sa-mh-big]").reshape(3, 3),
                                   expected.single.weights, rtol=0, atol=1e-12)
        np.testing.assert_allclose(canvas_values(page, f"{MH} [data-testid=sa-mh-output]").reshape(3, 6),
                                   expected.output, rtol=0, atol=1e-12)
    page.wait_for_timeout(1500)
    assert sent[0] == before, "the multi-head knobs sent a message to the server"
    assert_no_error(page)


# --- durable: a page change and a link ---------------------------------------------------------


def go(page: Page, page_id: str) -> None:
    """Another page of the app in the same session, through the sidebar's link."""
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=load_strings("en")[f"nav.{page_id}"]).first.click()
    wait_for_app(page)
    assert_no_error(page)


def test_knobs_survive_a_page_change_and_come_back_from_a_link(page: Page, browser, app_url: str) -> None:
    from urllib.parse import parse_qs, urlparse

    open_page(page, f"{app_url}/positional_encoding", VECTOR)
    slider = page.locator(f"{TABLE} [data-knob=pe_d_model] input")
    slider.focus()
    for _ in range(10):  # 8 → 28 by the keyboard
        page.keyboard.press("ArrowRight")
    set_input(page, f"{VECTOR} [data-knob=pe_position] input", 9)
    page.locator(f"{TABLE} [data-knob=pe_pairs] input").nth(5).check()
    check_positional(page, 28, 10000, 9, 2)
    query = parse_qs(urlparse(page.url).query)
    assert query["pe_d_model"] == ["28"] and query["pe_position"] == ["9"], page.url
    assert query["pe_pairs"] == ["0,3,5,13"], page.url  # the defaults (0, 3, 13) and the ticked 5
    assert "pe_offset" not in query  # defaults stay out of the link

    go(page, "self_attention")
    page.locator(f"{STEPS} [data-knob=sa_mask] label").click()
    expect(page.locator(f"{STEPS} [data-knob=sa_mask] input")).to_be_checked()
    assert parse_qs(urlparse(page.url).query)["sa_mask"] == ["1"], page.url

    go(page, "positional_encoding")  # back: the browser's values, not the server's stale ones
    expect(page.locator(f"{TABLE} [data-knob=pe_d_model] input")).to_have_value("28", timeout=30_000)
    check_positional(page, 28, 10000, 9, 2)
    expect(page.locator(f"{TABLE} [data-testid=pe-waves] .tl-series-legend li")).to_have_count(8)
    link = page.url
    go(page, "self_attention")
    expect(page.locator(f"{STEPS} [data-knob=sa_mask] input")).to_be_checked(timeout=30_000)

    fresh = browser.new_context(viewport={"width": 1440, "height": 1000})  # a new session: only the link
    other = fresh.new_page()
    open_page(other, link, VECTOR)
    expect(other.locator(f"{TABLE} [data-knob=pe_d_model] input")).to_have_value("28")
    check_positional(other, 28, 10000, 9, 2)
    expect(other.locator(f"{TABLE} [data-testid=pe-waves] .tl-series-legend li")).to_have_count(8)
    # A tampered link: the server falls back (with its note) and so does the browser.
    open_page(other, link.replace("pe_d_model=28", "pe_d_model=7").replace("pe_position=9", "pe_position=x"), VECTOR)
    expect(other.locator(f"{TABLE} [data-knob=pe_d_model] input")).to_have_value("8")
    check_positional(other, 8, 10000, 3, 2)
    fresh.close()
