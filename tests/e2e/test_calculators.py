"""In real Chromium: the parameter counter (Whole model) and the KV-cache memory calculator
(Generation) answer in the browser (ui/components/calculators):

* the numbers drawn equal core.lessons.param_count's and kv_memory's on random inputs;
* changing an input by keyboard (arrow keys, typing), mouse (a click on a box's spin button, a
  checkbox) or a preset sends no websocket frame;
* a value out of range is refused with the page language's message;
* the values survive a page change, are in the address bar and come back from that link in a new
  session, here a 390×844 phone in 中文 dark.
"""

from __future__ import annotations

import dataclasses
import random
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, Page, expect

from core.lessons.kv_memory import (
    DTYPE_BITS,
    MODEL_PRESETS,
    compare_head_sharing,
    format_bytes,
    gqa_choices,
    head_sharing_kind,
    kv_cache_memory,
)
import core
from core.lessons.param_count import PRESETS, ArchSpec, count_parameters, spec_from_config
from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import translate

COUNTER = ".st-key-wm_calculator .cal"  # Playwright's CSS reaches into the shadow root
SHARE = ".st-key-wm_layer_share .cal"
MEMORY = ".st-key-generation_kv_calculator .cal"
WM_PRESETS = ["__ours__", *PRESETS]  # the selects' order (their options carry indices)
KV_PRESETS = [*MODEL_PRESETS, "__live__"]


def _spin_up(page: Page, selector: str) -> None:
    """A mouse click on a number box's up arrow (Chromium draws it inside the right padding edge)."""
    page.locator(selector).evaluate("input => input.scrollIntoView({ block: 'center' })")
    area = page.locator(selector).bounding_box()
    assert area
    x, y = area["x"] + area["width"] - 17, area["y"] + area["height"] * 0.3
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.up()


def _count_frames(page: Page) -> list[int]:
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _open(page: Page, url: str, root: str, phone: bool = False) -> None:
    page.goto(url)
    if phone:  # a phone's sidebar is collapsed: attached, not visible
        page.wait_for_selector('[data-testid="stSidebar"]', state="attached", timeout=60_000)
        page.wait_for_selector('[data-testid="stMain"]', timeout=60_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    else:
        wait_for_app(page)
    expect(page.locator(root)).to_be_visible(timeout=60_000)
    page.locator(root).scroll_into_view_if_needed()
    assert_no_error(page)


def _input(page: Page, root: str, knob: str) -> str:
    return f"{root} [data-knob='{knob}'] input, {root} [data-knob='{knob}'] select"


def _type(page: Page, root: str, knob: str, value: object) -> None:
    """Set a box as typing does (an input event), without the server."""
    page.locator(_input(page, root, knob)).evaluate(
        "(input, v) => { input.value = v; input.dispatchEvent(new Event('input', { bubbles: true })); }", str(value))


def _spec(page: Page) -> dict:
    return page.locator(COUNTER).evaluate("root => JSON.parse(root.dataset.spec)")


def _total(page: Page) -> str:
    return page.locator(COUNTER).evaluate("root => root.dataset.total")


def _metric(page: Page, root: str, testid: str) -> str:
    return page.locator(f"{root} [data-testid='{testid}']").evaluate("m => m.dataset.value")


def _query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _check_counter(page: Page) -> None:
    """The counter shows core's count for the config its inputs hold (or says why there is none)."""
    spec = _spec(page)
    try:
        count = count_parameters(ArchSpec(**spec))
    except ValueError:
        expect(page.locator(f"{COUNTER} [data-testid='wm-invalid']")).to_be_visible()
        assert _total(page) == ""
        return
    assert int(_total(page)) == count.total, spec
    assert int(_metric(page, COUNTER, "wm-active")) == count.active, spec
    cells = page.locator(f"{COUNTER} [data-testid='wm-count-table'] tbody tr td:nth-child(3)").all_text_contents()
    assert cells == [f"{count.components[p]:,}" for p in count.components if count.components[p] > 0]
    layer = count.per_layer
    in_layer = layer["attention"] + layer["ffn"] + layer["router"] + layer["norms"]
    expect(page.locator(f"{SHARE} .cal-share-text")).to_contain_text(f"{in_layer:,}")


def test_the_counter_equals_core_and_sends_nothing(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/whole_model", COUNTER)
    page.wait_for_timeout(1000)
    frames = sent[0]
    _check_counter(page)
    expect(page.locator(f"{COUNTER} [data-testid='wm-check']")).to_contain_text("✓")  # = sum(p.numel())
    page.locator(f"{COUNTER} .cal-edit summary").click()  # mouse: open the config
    # Keyboard: the preset by arrow key, then arrow keys on a focused box.
    preset = page.locator(_input(page, COUNTER, "wm_preset"))
    preset.focus()
    page.keyboard.press("ArrowDown")
    assert preset.evaluate("s => s.selectedIndex") == 1
    assert _spec(page)["d_model"] == 768 and _total(page) == "124439808"  # GPT-2 small
    expect(page.locator(f"{COUNTER} [data-testid='wm-check']")).to_contain_text("124,439,808 ✓")
    layers = page.locator(_input(page, COUNTER, "wm_n_layer"))
    layers.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert _spec(page)["n_layer"] == 14
    _check_counter(page)
    # Mouse: the box's spin button (its upper half at the right edge) and a checkbox.
    _spin_up(page, _input(page, COUNTER, "wm_n_head"))
    assert _spec(page)["n_head"] == 13  # 768 is not divisible by 13: the page says why, in its words
    expect(page.locator(f"{COUNTER} [data-testid='wm-invalid']")).to_contain_text("divisible by the number of heads (13)")
    _type(page, COUNTER, "wm_n_head", 12)
    tied = page.locator(f"{COUNTER} [data-knob='wm_tied'] label")
    tied.click()
    assert _spec(page)["tied"] is False
    _check_counter(page)
    # Random configs, typed (most valid; some with heads that do not divide).
    rng = random.Random(4303)
    for _ in range(20):
        n_kv = rng.choice((1, 2, 4, 8))
        n_head = n_kv * rng.choice((1, 2, 3, 5))
        values = {"vocab": rng.randint(1, 10_000_000), "d_model": n_head * rng.randint(1, 2000) + rng.choice((0, 0, 0, 1)),
                  "n_layer": rng.randint(1, 1000), "n_ctx": rng.randint(1, 1_000_000), "n_head": n_head, "n_kv_head": n_kv,
                  "d_ff": rng.randint(1, 4_000_000), "n_experts": rng.choice((1, 8, 4096))}
        values["n_active"] = rng.randint(1, values["n_experts"])
        for field, value in values.items():
            _type(page, COUNTER, f"wm_{field}", value)
        page.locator(_input(page, COUNTER, "wm_ffn")).select_option(index=rng.randint(0, 1))
        assert {k: _spec(page)[k] for k in values} == values
        _check_counter(page)
    # Out of range: refused with the page's words, the last good value kept.
    _type(page, COUNTER, "wm_n_layer", 1001)
    expect(page.locator(f"{COUNTER} [data-knob='wm_n_layer'] .tl-invalid")).to_have_text(
        translate("whole_model.calc.invalid_box", "en", min=1, max="1,000"))
    page.wait_for_timeout(1000)
    assert sent[0] == frames, "changing the counter sent a message to the server"
    assert_no_error(page)


def _check_memory(page: Page) -> None:
    """The memory calculator shows core's sizes for its inputs, and core's MHA / GQA / MQA rows."""
    n = page.locator(MEMORY).evaluate("root => JSON.parse(root.dataset.inputs)")
    mem = kv_cache_memory(n["layers"], n["kv_heads"], n["head_dim"], n["tokens"], n["batch"], n["dtype"])
    assert int(_metric(page, MEMORY, "kv-per-layer")) == mem.bytes_per_layer, n
    assert int(_metric(page, MEMORY, "kv-total")) == mem.total_bytes, n
    expect(page.locator(f"{MEMORY} [data-testid='kv-total'] .tl-metric-value")).to_have_text(format_bytes(mem.total_bytes))
    try:
        layout = head_sharing_kind(n["heads"], n["kv_heads"])
    except ValueError:
        expect(page.locator(f"{MEMORY} [data-testid='kv-uneven']")).to_be_visible()
        return
    choices = gqa_choices(n["heads"])
    gqa = n["kv_heads"] if layout == "GQA" else max([c for c in choices if c <= n["heads"] // 4],
                                                    default=choices[0] if choices else None)
    variants = compare_head_sharing(n["layers"], n["heads"], gqa, n["head_dim"], n["tokens"], n["batch"], n["dtype"])
    totals = page.locator(f"{MEMORY} [data-testid='kv-variants-table'] tbody tr td:nth-child(5)").all_text_contents()
    assert totals == [format_bytes(v.memory.total_bytes) for v in variants], n


def test_the_memory_calculator_equals_core_and_sends_nothing(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/generation", MEMORY)
    page.wait_for_timeout(1000)
    frames = sent[0]
    _check_memory(page)
    expect(page.locator(f"{MEMORY} [data-testid='kv-per-layer'] .tl-metric-value")).to_have_text("40.96 MB")
    # Keyboard: arrow keys on the context box move it by 1,000 tokens.
    tokens = page.locator(_input(page, MEMORY, "generation_kv_tokens"))
    tokens.focus()
    page.keyboard.press("ArrowUp")
    assert page.locator(MEMORY).evaluate("root => JSON.parse(root.dataset.inputs).tokens") == 11_000
    _check_memory(page)
    # Mouse: the layers box's spin button.
    _spin_up(page, _input(page, MEMORY, "generation_kv_layers"))
    assert page.locator(MEMORY).evaluate("root => JSON.parse(root.dataset.inputs).layers") == 49
    _check_memory(page)
    page.locator(_input(page, MEMORY, "generation_kv_preset")).select_option(index=KV_PRESETS.index("gpt2_small"))
    expect(page.locator(f"{MEMORY} [data-testid='kv-total'] .tl-metric-value")).to_have_text("37.75 MB")
    rng = random.Random(4304)
    for _ in range(20):
        kv = rng.choice((1, 2, 8, rng.randint(1, 64)))
        values = {"layers": rng.randint(1, 1000), "heads": min(1024, kv * rng.randint(1, 16)), "kv_heads": kv,
                  "head_dim": rng.randint(1, 4096), "tokens": rng.randint(1, 10_000_000), "batch": rng.randint(1, 4096)}
        for field, value in values.items():
            _type(page, MEMORY, f"generation_kv_{field}", value)
        page.locator(_input(page, MEMORY, "generation_kv_dtype")).select_option(index=rng.randrange(len(DTYPE_BITS)))
        _check_memory(page)
    _type(page, MEMORY, "generation_kv_heads", 40)
    _type(page, MEMORY, "generation_kv_kv_heads", 7)  # 40 query heads do not split over 7
    _check_memory(page)
    page.wait_for_timeout(1000)
    assert sent[0] == frames, "changing the memory calculator sent a message to the server"
    assert_no_error(page)


def test_values_survive_a_page_change_and_come_back_from_a_link_on_a_zh_dark_phone(
        page: Page, app_url: str, browser: Browser) -> None:
    _open(page, f"{app_url}/whole_model", COUNTER)
    page.locator(_input(page, COUNTER, "wm_preset")).select_option(index=WM_PRESETS.index("llama-7b"))
    page.locator(f"{COUNTER} .cal-edit summary").click()
    _type(page, COUNTER, "wm_n_layer", 40)
    page.locator(f"{COUNTER} [data-knob='wm_bias'] label").click()
    counted = _total(page)
    assert counted == str(count_parameters(ArchSpec(**_spec(page))).total)
    assert {"wm_preset": "llama-7b", "wm_n_layer": "40", "wm_bias": "1"}.items() <= _query(page).items()
    assert "wm_vocab" not in _query(page)  # the preset's own values stay out of the link
    # To Generation (the sidebar's link, the same session): change the context there too.
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Generation").first.click()
    wait_for_app(page)
    expect(page.locator(MEMORY)).to_be_visible(timeout=60_000)
    _type(page, MEMORY, "generation_kv_tokens", 4096)
    page.locator(_input(page, MEMORY, "generation_kv_dtype")).select_option(index=list(DTYPE_BITS).index("int4"))
    assert {"generation_kv_tokens": "4096", "generation_kv_dtype": "int4"}.items() <= _query(page).items()
    # Back: the counter shows what it showed.
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="The whole model").first.click()
    wait_for_app(page)
    expect(page.locator(COUNTER)).to_be_visible(timeout=60_000)
    assert _spec(page)["n_layer"] == 40 and _spec(page)["bias"] is True and _total(page) == counted
    assert page.locator(_input(page, COUNTER, "wm_preset")).evaluate("s => s.selectedIndex") == WM_PRESETS.index("llama-7b")
    link = page.url
    assert "wm_n_layer=40" in link
    # The link in a new browser (new session, empty sessionStorage): a 中文 dark phone.
    other = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                locale="zh-CN", color_scheme="dark")
    try:
        phone = other.new_page()
        sent = _count_frames(phone)
        _open(phone, link + "&lang=zh", COUNTER, phone=True)
        assert _spec(phone)["n_layer"] == 40 and _total(phone) == counted
        assert phone.locator(COUNTER).evaluate("root => root.classList.contains('dark')")
        expect(phone.locator(f"{COUNTER} [data-testid='wm-total'] .tl-metric-label")).to_have_text(
            translate("whole_model.calc.total", "zh"))
        phone.wait_for_timeout(800)
        frames = sent[0]
        phone.locator(f"{COUNTER} .cal-edit summary").tap()
        _type(phone, COUNTER, "wm_n_layer", 0)
        expect(phone.locator(f"{COUNTER} [data-knob='wm_n_layer'] .tl-invalid")).to_have_text(
            translate("whole_model.calc.invalid_box", "zh", min=1, max="1,000"))
        _type(phone, COUNTER, "wm_n_layer", 41)
        _check_counter(phone)
        width = phone.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways on a phone ({width} px)"
        phone.wait_for_timeout(800)
        assert sent[0] == frames
        assert_no_error(phone)
    finally:
        other.close()


def test_a_new_model_keeps_another_preset_and_renews_our_model(page: Page, app_url: str) -> None:
    """The server's "our model" values change with the model; a browser showing another preset keeps
    all of its own values (not a mix), and "our model" then counts the new model, exactly."""
    _open(page, f"{app_url}/whole_model", COUNTER)
    page.locator(_input(page, COUNTER, "wm_preset")).select_option(index=WM_PRESETS.index("gpt2-small"))
    page.locator(f"{COUNTER} .cal-edit summary").click()
    _type(page, COUNTER, "wm_n_layer", 13)
    gpt2 = _spec(page)
    model_box = page.locator('[data-testid="stSidebar"] .st-key-w_model [data-testid="stSelectbox"] input')
    model_box.click()
    model_box.press_sequentially("modern")  # Streamlit's select filters as one types
    model_box.press("Enter")
    wait_for_app(page)
    expect(page.locator(COUNTER)).to_be_visible(timeout=60_000)
    page.wait_for_function("() => location.search.includes('model=modern')", timeout=30_000)
    assert _spec(page) == gpt2 and page.locator(_input(page, COUNTER, "wm_preset")).evaluate("s => s.selectedIndex") == 1
    _check_counter(page)
    page.locator(_input(page, COUNTER, "wm_preset")).select_option(index=0)
    modern = core.load_builtin("modern")
    expected = {k: v for k, v in dataclasses.asdict(spec_from_config(modern.config)).items() if k != "n_shared"}
    assert _spec(page) == expected
    assert int(_total(page)) == sum(p.numel() for p in modern.model.parameters())
    expect(page.locator(f"{COUNTER} [data-testid='wm-check']")).to_contain_text("✓")
    assert_no_error(page)
