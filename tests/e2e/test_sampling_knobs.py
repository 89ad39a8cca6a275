"""In real Chromium: the sampling knobs answer in the browser (ui/components/sampling_lab).

* the numbers drawn equal core.engine.sampling's on random knob settings (whole vocabulary);
* moving a knob by mouse, touch-like pointer or keyboard sends no websocket frame;
* the values survive a page change (Logits -> Generation -> Logits), are in the address bar
  (so "Link to this view" carries them) and come back from that link in a new session;
* Generation's Next token uses the values shown (the trigger carries them).
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, quote, urlparse

import numpy as np
from playwright.sync_api import Browser, Locator, Page, expect

import core
from core.engine.sampling import sampling_steps
from tests.e2e.helpers import assert_no_error, wait_for_app

PROMPT = "The capital of France is"
LOGITS_LAB = ".st-key-logits_sampling_knobs .sl"  # Playwright's CSS reaches into the shadow root
GEN_LAB = ".st-key-generation_knobs .sl"


def _count_frames(page: Page) -> list[int]:
    """Messages the browser sends to the server (each rerun request is one)."""
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _wait_phone(page: Page) -> None:
    """Like helpers.wait_for_app, but a phone's sidebar is collapsed (attached, not visible)."""
    page.wait_for_selector('[data-testid="stSidebar"]', state="attached", timeout=60_000)
    page.wait_for_selector('[data-testid="stMain"]', timeout=60_000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(300)


def _open(page: Page, url: str, lab: str = LOGITS_LAB, phone: bool = False) -> None:
    page.goto(url)
    if phone:
        _wait_phone(page)
    else:
        wait_for_app(page)
    expect(page.locator(lab)).to_be_visible(timeout=60_000)
    page.locator(lab).scroll_into_view_if_needed()
    assert_no_error(page)


def _set(page: Page, lab: str, knob: str, value: str) -> None:
    """Set a knob's input as a student's move does (an input event), without the server."""
    page.locator(f"{lab} .knob[data-knob='{knob}'] input").evaluate(
        "(input, v) => { input.value = v; input.dispatchEvent(new Event('input', { bubbles: true })); }", value)


def _shown(page: Page, lab: str = LOGITS_LAB) -> dict:
    """What the component drew: each bar's token id and probabilities, metrics, statuses."""
    return page.locator(lab).evaluate("""root => ({
        knobs: JSON.parse(root.dataset.knobs),
        ids: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.id)),
        before: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.before)),
        after: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.after)),
        status: [...root.querySelectorAll('.sl-row[data-id] .sl-status')].map(s => s.textContent),
        candidates: Number(root.querySelector('.sl-metrics')?.dataset.candidates ?? -1),
        entropy: Number(root.querySelector('.sl-metrics')?.dataset.entropy ?? -1),
        note: root.querySelector('.sl-note')?.textContent ?? '',
        title: root.querySelector('.sl-title')?.textContent ?? '',
    })""")


def _logits(page: Page, lab: str = LOGITS_LAB) -> np.ndarray:
    """The logits the component computes on (float32 as the model wrote them: tests/app checks
    they are the page's, bit for bit), widened to float64 as core does."""
    sent = page.locator(lab).evaluate("root => root.tjLogits")
    return np.frombuffer(base64.b64decode(sent), dtype="<f4").astype(np.float64)


def _status(steps, token: int, temperature: float) -> str:
    """The page's status words for a token (as ui/sections/logits_sampling.py said them)."""
    if steps.cut_by_top_k[token]:
        return "cut by top-k"
    if temperature == 0 and steps.final_probs[token] == 0:
        return "not the top token (T = 0)"
    return "cut by top-p" if steps.cut_by_top_p[token] else "kept"


def test_browser_numbers_equal_core_on_random_settings(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/logits_sampling?prompt={quote(PROMPT)}")
    page.wait_for_timeout(1000)
    frames = sent[0]
    logits = _logits(page)
    reference = core.load_builtin("classic")
    model_logits = reference.model.logits(reference.tokenizer.encode(PROMPT))[-1]
    np.testing.assert_allclose(logits, model_logits, rtol=1e-4, atol=1e-4)  # this prompt's, from the live model
    rng = np.random.default_rng(43)
    cases = [(0.0, 0, 1.0), (1.0, 1, 1.0), (0.0, 3, 0.5), (2.5, 0, 0.5), (1.0, logits.size, 0.05)]
    cases += [(round(0.05 * int(rng.integers(0, 61)), 2), int(rng.choice([0, rng.integers(1, 60), rng.integers(1, logits.size + 1)])),
               round(0.05 * int(rng.integers(1, 21)), 2)) for _ in range(25)]
    for temperature, top_k, top_p in cases:
        _set(page, LOGITS_LAB, "temperature", str(temperature))
        _set(page, LOGITS_LAB, "top_k", str(top_k))
        _set(page, LOGITS_LAB, "top_p", str(top_p))
        shown = _shown(page)
        assert shown["knobs"] == {"temperature": temperature, "topK": top_k, "topP": top_p}
        steps = sampling_steps(logits, temperature, top_k or None, top_p)
        case = (temperature, top_k, top_p)
        np.testing.assert_allclose(shown["after"], steps.final_probs[shown["ids"]], rtol=1e-9, atol=1e-12, err_msg=str(case))
        np.testing.assert_allclose(shown["before"], steps.original_probs[shown["ids"]], rtol=1e-9, atol=1e-12)
        assert shown["candidates"] == steps.n_candidates, case
        assert abs(shown["entropy"] - steps.entropy_final_bits) < 1e-9, case
        assert shown["status"] == [_status(steps, i, temperature) for i in shown["ids"]], case
        top_k_text = str(top_k) if top_k else "off"
        assert f"T = {temperature:.2f}, top-k = {top_k_text}, top-p = {top_p:.2f}" in shown["title"], shown["title"]
        assert ("greedy decoding" in shown["note"]) == (temperature == 0), case
    page.wait_for_timeout(1000)
    assert sent[0] == frames, "moving the knobs sent a message to the server"
    assert_no_error(page)


def test_mouse_and_keyboard_moves_send_no_frame(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/logits_sampling")
    page.wait_for_timeout(1000)
    frames = sent[0]
    start = _shown(page)
    # Mouse: press on the temperature track a quarter of the way along (T = 0.75).
    slider = page.locator(f"{LOGITS_LAB} .knob[data-knob='temperature'] input")
    box = slider.bounding_box()
    assert box
    page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
    moved = _shown(page)
    assert moved["knobs"]["temperature"] < 1 and moved["after"] != start["after"]
    # Keyboard: arrow keys on the focused sliders and the top-k box.
    slider.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert _shown(page)["knobs"]["temperature"] == round(moved["knobs"]["temperature"] + 0.15, 2)
    top_p = page.locator(f"{LOGITS_LAB} .knob[data-knob='top_p'] input")
    top_p.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(top_p).to_have_attribute("aria-valuetext", "0.90")
    top_k = page.locator(f"{LOGITS_LAB} .knob[data-knob='top_k'] input")
    top_k.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    after = _shown(page)
    assert after["knobs"]["topK"] == 2 and after["knobs"]["topP"] == 0.9
    assert after["status"][2:] == ["cut by top-k"] * (len(after["ids"]) - 2)
    # Labels: each input is named by its label (a screen reader says "Temperature T, slider").
    expect(page.get_by_label("Temperature T")).to_have_count(1)
    page.wait_for_timeout(1000)
    assert sent[0] == frames, "moving the knobs sent a message to the server"
    assert_no_error(page)


# The Logits lab's shown knobs, in page JS (page.wait_for_function has no shadow-piercing CSS);
# looked up afresh on each poll, so a re-mounted root is read too.
_FIND_LAB = """() => {
    const host = document.querySelector('.st-key-logits_sampling_knobs');
    const roots = [host, ...[...host.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)];
    for (const r of roots) { const lab = r.querySelector('.sl'); if (lab) return JSON.parse(lab.dataset.knobs); }
    return {};
}"""


def _tap_point(page: Page, target: Locator) -> tuple[float, float]:
    """A point 5% along the target's track that hits the target itself (through shadow roots):
    waits until nothing (a fixed header, a sliding sidebar, a re-mount) covers it."""
    for _ in range(50):
        box = target.bounding_box()
        assert box
        x, y = box["x"] + box["width"] * 0.05, box["y"] + box["height"] / 2
        hit = target.evaluate("""(input, [x, y]) => {
            let e = document.elementFromPoint(x, y);
            while (e && e.shadowRoot) {
                const inner = e.shadowRoot.elementFromPoint(x, y);
                if (!inner || inner === e) break;
                e = inner;
            }
            return e === input;
        }""", [x, y])
        if hit:
            return x, y
        page.wait_for_timeout(100)
    raise AssertionError(f"the tap point {(x, y)} stays covered by another element")


def _query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_values_survive_a_page_change_and_come_back_from_a_link(page: Page, app_url: str, browser: Browser) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/logits_sampling")
    _set(page, LOGITS_LAB, "temperature", "0.5")
    _set(page, LOGITS_LAB, "top_p", "0.8")
    assert _query(page).get("sampling_temperature") == "0.5" and _query(page).get("sampling_top_p") == "0.8"
    # To Generation in this session (the sidebar's link): its preview starts from the moved values.
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Generation").first.click()
    wait_for_app(page)
    expect(page.locator(GEN_LAB)).to_be_visible(timeout=60_000)
    assert _shown(page, GEN_LAB)["knobs"] == {"temperature": 0.5, "topK": 0, "topP": 0.8}
    assert _query(page).get("sampling_temperature") == "0.5"  # merged again after Streamlit's own URL
    # Generation's preview answers in the browser too: arrow keys on its top-k box, no frame.
    page.wait_for_timeout(500)
    frames = sent[0]
    page.locator(f"{GEN_LAB} .knob[data-knob='top_k'] input").focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert _shown(page, GEN_LAB)["knobs"]["topK"] == 2 and "top-k = 2" in _shown(page, GEN_LAB)["title"]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(800)
    assert sent[0] == frames, "moving Generation's knob sent a message to the server"
    # Next token carries them: the server commits them (the stale hint goes away after the run).
    page.locator(f"{GEN_LAB} button[data-action='next']").click()
    wait_for_app(page)
    expect(page.get_by_text("(1 tokens generated)", exact=False)).to_be_visible()
    expect(page.locator(f"{GEN_LAB} .sl-stale")).to_have_text("")
    # Back to Logits: the same values; Draw says it used them.
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Logits").first.click()
    wait_for_app(page)
    expect(page.locator(LOGITS_LAB)).to_be_visible(timeout=60_000)
    assert _shown(page)["knobs"] == {"temperature": 0.5, "topK": 0, "topP": 0.8}
    _set(page, LOGITS_LAB, "top_k", "7")  # moved, not sent: still in the link
    expect(page.locator(f"{LOGITS_LAB} .sl-stale")).not_to_have_text("")
    link = page.url
    assert _query(page).get("sampling_top_k") == "7"
    page.locator(f"{LOGITS_LAB} button[data-action='draw']").click()
    wait_for_app(page)
    expect(page.get_by_text("These draws used T = 0.50, top-k = 7, top-p = 0.80.")).to_be_visible()
    # The link in a new browser (new session, empty sessionStorage) opens the same knobs.
    other = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    try:
        phone = other.new_page()
        _open(phone, link, phone=True)
        assert _shown(phone)["knobs"] == {"temperature": 0.5, "topK": 7, "topP": 0.8}
        # Touch: a tap on the top-p track moves it, still without a server message.
        sent = _count_frames(phone)
        phone.wait_for_timeout(500)
        frames = sent[0]
        expect(phone.locator(f"{LOGITS_LAB}[data-ready='1']")).to_be_attached()
        track = phone.locator(f"{LOGITS_LAB} .knob[data-knob='top_p'] input")
        # Not scroll_into_view_if_needed: it may leave the track at the top of the main column,
        # under Streamlit's fixed header, and the tap then lands on the header's "open sidebar"
        # button (the flake: the sidebar opened, the knob never saw the tap). Centre the track
        # and tap only once the point hits the input itself.
        track.evaluate("input => input.scrollIntoView({ block: 'center' })")
        x, y = _tap_point(phone, track)
        phone.touchscreen.tap(x, y)
        # The tap's input event arrives after the touch sequence (Chromium's synthesised click).
        phone.wait_for_function(f"() => ({_FIND_LAB})().topP < 0.8", timeout=10_000)
        assert _shown(phone)["knobs"]["topP"] < 0.8
        phone.wait_for_timeout(800)
        assert sent[0] == frames
        assert_no_error(phone)
    finally:
        other.close()


SOFTMAX = ".st-key-logits_sampling_softmax .sl"  # the softmax section: "Tokens to show (N)"


def _softmax_shown(page: Page) -> dict:
    return page.locator(SOFTMAX).evaluate("""root => ({
        n: Number(root.dataset.topN),
        ids: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.id)),
        probs: [...root.querySelectorAll('.sl-row[data-p]')].map(r => Number(r.dataset.p)),
        tail: Number(root.querySelector('.sl-metrics').dataset.tail),
        metrics: Object.fromEntries([...root.querySelectorAll('.sl-metric')].map(
            m => [m.dataset.metric, m.querySelector('.sl-metric-value').textContent])),
        title: root.querySelector('.sl-title').textContent,
    })""")


def test_top_n_answers_in_the_browser_with_core_numbers(page: Page, app_url: str, browser: Browser) -> None:
    """"Tokens to show (N)": the bars, the rest's mass and the knobs' bars follow N (mouse,
    keyboard, random values) with core's numbers and no frame; N survives a page change and comes
    back from the link; a tampered N in a link falls back to the default."""
    from core.engine.sampling import entropy_bits, softmax

    sent = _count_frames(page)
    _open(page, f"{app_url}/logits_sampling?prompt={quote(PROMPT)}", lab=SOFTMAX)
    page.wait_for_timeout(1000)
    frames = sent[0]
    probs = softmax(_logits(page))
    order = np.lexsort((np.arange(probs.size), -probs))
    start = _softmax_shown(page)
    assert start["n"] == 10 and start["ids"] == [int(i) for i in order[:10]]
    assert start["metrics"]["entropy"] == f"{entropy_bits(probs):.2f}"
    rng = np.random.default_rng(44)
    for n in [5, 30, *(int(v) for v in rng.integers(5, 31, size=8))]:
        _set(page, SOFTMAX, "top_n", str(n))
        shown = _softmax_shown(page)
        top = order[:n]
        assert shown["n"] == n and shown["ids"] == [int(i) for i in top]
        np.testing.assert_allclose(shown["probs"][:-1], probs[top], rtol=1e-12, atol=0)
        tail = float(1.0 - probs[top].sum())  # as the page's Python computed it
        assert abs(shown["tail"] - tail) < 1e-12 and shown["probs"][-1] == shown["tail"]
        assert shown["metrics"]["tail"] == f"{tail:.4f}" and shown["metrics"]["top_prob"] == f"{probs[order[0]]:.4f}"
        assert shown["title"].startswith(f"Top {n} of {probs.size:,}")
        assert _shown(page)["ids"] == [int(i) for i in top]  # the knobs' bars below show the same N
    # Keyboard and mouse on the slider itself.
    slider = page.locator(f"{SOFTMAX} .knob[data-knob='top_n'] input")
    slider.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    n = _softmax_shown(page)["n"]
    box = slider.bounding_box()
    assert box
    page.mouse.click(box["x"] + box["width"] * 0.98, box["y"] + box["height"] / 2)
    assert _softmax_shown(page)["n"] >= 29 > n
    expect(page.get_by_label("Tokens to show (N)")).to_have_count(1)
    _set(page, SOFTMAX, "top_n", "13")
    page.wait_for_timeout(800)
    assert sent[0] == frames, "moving N sent a message to the server"
    assert _query(page).get("logits_sampling_top_n") == "13"
    link = page.url
    # Another page and back in this session: N is still 13.
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Generation").first.click()
    wait_for_app(page)
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Logits").first.click()
    wait_for_app(page)
    expect(page.locator(SOFTMAX)).to_be_visible(timeout=60_000)
    assert _softmax_shown(page)["n"] == 13 and len(_shown(page)["ids"]) == 13
    # The link in a new browser (empty sessionStorage) opens N = 13; a tampered N falls back to 10.
    other = browser.new_context()
    try:
        fresh = other.new_page()
        _open(fresh, link, lab=SOFTMAX)
        assert _softmax_shown(fresh)["n"] == 13
        _open(fresh, link.replace("logits_sampling_top_n=13", "logits_sampling_top_n=999"), lab=SOFTMAX)
        assert _softmax_shown(fresh)["n"] == 10
        assert_no_error(fresh)
    finally:
        other.close()


DRAWS = ".st-key-logits_sampling_draws .sl"  # the seeded draws: "Number of draws N"


def _histogram(page: Page) -> dict:
    return page.locator(DRAWS).evaluate("""root => ({
        n: Number(root.dataset.n),
        ids: [...root.querySelectorAll('.sl-row[data-id]')].map(r => r.dataset.id),
        counts: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.count)),
        observed: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.observed)),
        expected: [...root.querySelectorAll('.sl-row[data-id]')].map(r => Number(r.dataset.expected)),
        caption: root.querySelector('.sl-caption').textContent,
        title: root.querySelector('.sl-title').textContent,
    })""")


def test_number_of_draws_answers_in_the_browser_with_cores_draws(page: Page, app_url: str, browser: Browser) -> None:
    """"Number of draws N": the histogram equals core's sample(final, n, seed) for random N and
    committed knobs, with no frame (mouse, keyboard); Draw carries N; N survives a page change,
    comes back from the link, and a tampered N falls back."""
    from core.engine.sampling import sample

    sent = _count_frames(page)
    _open(page, f"{app_url}/logits_sampling?prompt={quote(PROMPT)}&sampling_temperature=1.5&sampling_top_k=9",
          lab=DRAWS)
    page.wait_for_timeout(1000)
    frames = sent[0]
    final = sampling_steps(_logits(page), 1.5, 9, 1.0).final_probs  # the committed knobs (from the link)
    order = np.lexsort((np.arange(final.size), -final))
    top = [int(i) for i in order[final[order] > 0][:12]]
    rng = np.random.default_rng(45)
    for n in [1, 1000, 200, *(int(v) for v in rng.integers(1, 1001, size=8))]:
        _set(page, DRAWS, "n_samples", str(n))
        shown = _histogram(page)
        counts = np.bincount(sample(final, n=n, seed=0), minlength=final.size)
        ids = top + [int(i) for i in np.flatnonzero(counts) if int(i) not in top][: max(0, 12 - len(top))]
        rest = n - int(counts[ids].sum())
        rest_p = max(0.0, 1.0 - sum(float(final[i]) for i in ids))
        expect_ids = [str(i) for i in ids] + (["other"] if rest > 0 or rest_p > 1e-6 else [])
        assert shown["n"] == n and shown["ids"] == expect_ids, n
        assert shown["counts"][: len(ids)] == [int(counts[i]) for i in ids], n
        assert shown["observed"][: len(ids)] == [counts[i] / n for i in ids]
        np.testing.assert_array_equal(shown["expected"][: len(ids)], final[ids])
        most = int(np.argmax(counts))
        assert f"came out {int(counts[most])} times; {int((counts > 0).sum())} different tokens" in shown["caption"]
        assert shown["title"].startswith(f"{n} draws with seed 0")
    slider = page.locator(f"{DRAWS} .knob[data-knob='n_samples'] input")
    slider.focus()
    page.keyboard.press("ArrowLeft")
    n = _histogram(page)["n"]
    box = slider.bounding_box()
    assert box
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] / 2)
    assert _histogram(page)["n"] != n
    _set(page, DRAWS, "n_samples", "321")
    page.wait_for_timeout(800)
    assert sent[0] == frames, "moving N sent a message to the server"
    assert _query(page).get("logits_sampling_n_samples") == "321"
    # Draw carries it (the server commits it: the next run's data holds 321).
    page.locator(f"{LOGITS_LAB} button[data-action='draw']").click()
    wait_for_app(page)
    assert _histogram(page)["n"] == 321
    link = page.url
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Generation").first.click()
    wait_for_app(page)
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Logits").first.click()
    wait_for_app(page)
    expect(page.locator(DRAWS)).to_be_visible(timeout=60_000)
    assert _histogram(page)["n"] == 321
    other = browser.new_context()
    try:
        fresh = other.new_page()
        _open(fresh, link, lab=DRAWS)
        assert _histogram(fresh)["n"] == 321
        _open(fresh, link.replace("logits_sampling_n_samples=321", "logits_sampling_n_samples=-4"), lab=DRAWS)
        assert _histogram(fresh)["n"] == 200
        assert_no_error(fresh)
    finally:
        other.close()
