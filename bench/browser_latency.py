"""Input event → chart redrawn, as a student sees it in Chromium: every browser knob, and the
interactions that still need the server.

A server is started as in ``bench/interactions.py`` (one process, loopback; ``--configs``
``NAME=PATH`` runs another copy of the app, e.g. a snapshot from before a change, so both are
measured in one run). Headless Chromium (Playwright, the e2e tests' browser) opens each row's
page and moves its control as a student does, ``--repeats`` times (plus one warm-up move, not
counted): arrow keys on a focused slider, number box or radio group, Space on a focused switch,
a keystroke in a text box, a click on a button or an option. Every move changes the value (the
keys alternate direction; a key that hits the end of a range changes nothing, so the first
move, the uncounted one, goes inward).

How a redraw is seen (``INIT_SCRIPT``, injected before the app loads): the move starts at the
student's own input event in the page (``keydown`` / ``pointerdown``), not when the driver is
asked to act (Playwright first waits for the target to be stable: 40-60 ms no student waits
for). From then on the page notes the last moment anything drew: a DOM change inside the row's
``drawn`` selector (looked up through shadow roots: components render in theirs, and the script
watches each root as it is attached), then the animation frame after it; or a call that paints
a canvas (heatmaps and the 3-D map draw on canvases, a data-only redraw changes no DOM node).
The latency is that last drawing time minus the input event, once the page has been quiet for
``--quiet`` ms and Streamlit's status widget says no run is going. "frames" is how many websocket
messages the page sent during the move: 0 for a knob answered in the browser (the issue's
requirement), at least 1 for a server interaction. A row whose move drew nothing in its
``drawn`` area says so ("no redraw") instead of timing the knob's own label.

Targets (issue #43): browser knobs p95 ≤ 50 ms and 0 frames; server interactions (a new prompt,
Generation's next token, an ablation, a model switch) p95 ≤ 300 ms, on a quiet machine.

Adding a row is one line in ``ROWS`` (``browser(...)`` or ``server(...)``); tests/unit/
test_bench_tables.py checks each browser row's knob against ``ui.state`` and the component code.

Run:  .venv/bin/python bench/browser_latency.py [--repeats 8] [--only positional] [--configs before=/tmp/before,now]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import load_average  # noqa: E402
from bench.interactions import start  # noqa: E402

INIT_SCRIPT = """
(() => {
  const tj = window.__tj = {last: 0, moved: 0, armed: false, sent: 0, hit: false, drawn: 'body'};
  const started = () => { if (tj.armed) { tj.moved = performance.now(); tj.armed = false; } };
  for (const type of ['keydown', 'pointerdown']) window.addEventListener(type, started, true);
  const NativeSocket = window.WebSocket;  // frames the page sends: each rerun request is one
  window.WebSocket = function (...args) {
    const socket = new NativeSocket(...args);
    const send = socket.send.bind(socket);
    socket.send = (data) => { tj.sent += 1; return send(data); };
    return socket;
  };
  window.WebSocket.prototype = NativeSocket.prototype;
  Object.assign(window.WebSocket, NativeSocket);
  // Inside the row's drawn area: its selector matched here, or at a shadow host above.
  const inDrawn = (node) => {
    let el = node && (node.nodeType === 1 ? node : node.parentElement || (node.host || null));
    while (el) {
      if (el.closest && el.closest(tj.drawn)) return true;
      const root = el.getRootNode && el.getRootNode();
      el = root && root.host ? root.host : null;
    }
    return false;
  };
  const note = () => { if (tj.moved) tj.last = performance.now(); };
  const watch = { subtree: true, childList: true, attributes: true, characterData: true };
  const observer = new MutationObserver((records) => {
    if (records.some((r) => inDrawn(r.target))) { tj.hit = true; note(); requestAnimationFrame(note); }
  });
  const begin = () => observer.observe(document.documentElement, watch);
  if (document.documentElement) begin(); else document.addEventListener('DOMContentLoaded', begin);
  const attachShadow = Element.prototype.attachShadow;  // components render in shadow roots
  Element.prototype.attachShadow = function (init) {
    const root = attachShadow.call(this, init);
    observer.observe(root, watch);
    return root;
  };
  const painted = () => { tj.hit = true; note(); };
  for (const name of ['clearRect', 'fillRect', 'fillText', 'drawImage', 'fill', 'stroke', 'putImageData']) {
    const original = CanvasRenderingContext2D.prototype[name];
    CanvasRenderingContext2D.prototype[name] = function (...args) { painted(); return original.apply(this, args); };
  }
  for (const ctx of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!ctx) continue;
    for (const name of ['drawArrays', 'drawElements', 'clear']) {
      const original = ctx.prototype[name];
      ctx.prototype[name] = function (...args) { painted(); return original.apply(this, args); };
    }
  }
})();
"""
ARM = ("(drawn) => { const tj = window.__tj; tj.drawn = drawn; tj.moved = 0; tj.armed = true; tj.last = 0;"
       " tj.sent = 0; tj.hit = false; }")

BROWSER_TARGET_MS = 50.0
SERVER_TARGET_MS = 300.0

# What each component redraws (inside its shadow root) when a knob moves; canvases count anywhere.
SAMPLING_DRAWN = ".sl-chart, .sl-table, .sl-metrics, .sl-title, .sl-grid"
LESSON_DRAWN = ".tl-chart, .tl-table, .tl-numbers, .tl-rope-panels, .tl-formula, .tl-metric, .tl-caption, pre"
BPE_DRAWN = ".bpe-chart, .bpe-chips, .bpe-table, .bpe-words, .bpe-svg, .bpe-head"
MHA_DRAWN = ".mh-view, .mh-panels, .mh-numbers, .mh-title, .mh-stage"
JOURNEY_DRAWN = ".tj-bars, .tj-out-chip"
SPACE_DRAWN = ".s3-stage, .s3-legend, .s3-caption"
CALC_DRAWN = ".cal-metrics, .cal-table, .tl-chart, .tl-caption, .tl-formula"
PAGE_DRAWN = '[data-testid="stMain"], [data-testid="stSidebar"]'  # a server rerun: anything on the page

LOGITS = ".st-key-logits_sampling_knobs .sl"  # Playwright's CSS reaches into shadow roots
GENERATION = ".st-key-generation_knobs .sl"
TABLE, VECTOR, ROPE = "[data-testid=pe-table]", "[data-testid=pe-vector]", "[data-testid=pe-rope]"
STEPS, LAB = "[data-testid=sa-steps]", "[data-testid=sa-lab]"
BPE = ".bpe[data-testid='bpe-steps']"
MAP = ".st-key-embeddings_map_chart [data-testid=space3d]"
HEADS = "[data-testid='mha-heads']"
COUNTER, KV_MEMORY = ".st-key-wm_calculator .cal", ".st-key-generation_kv_calculator .cal"


@dataclass(frozen=True)
class Row:
    name: str
    path: str  # the page's url path (and query)
    how: str  # "keys" (on the focused control), "click", "prompt" (sidebar text), "option" (a select's), "ablate"
    control: str  # CSS selector of the control the student focuses or clicks
    keys: tuple[str, str] = ("ArrowRight", "ArrowLeft")  # even / odd moves
    drawn: str = PAGE_DRAWN
    tab: str = ""  # i18n key of the Streamlit tab to open first
    knob: str = ""  # the ui.state name of a browser knob ("" for a server interaction)
    options: tuple[str, ...] = ()  # "option": the options to alternate between
    before: str = ""  # "keys": a key pressed before the move, not timed (End: the caret to the end of a text)

    @property
    def in_browser(self) -> bool:
        return bool(self.knob)

    @property
    def target_ms(self) -> float:
        return BROWSER_TARGET_MS if self.in_browser else SERVER_TARGET_MS


def browser(name: str, path: str, knob: str, control: str, drawn: str, *, keys: tuple[str, str] = ("ArrowRight", "ArrowLeft"),
            tab: str = "", before: str = "") -> Row:
    """A knob answered in the browser: keys pressed on its focused control."""
    return Row(name, path, "keys", control, keys, drawn, tab, knob, before=before)


def server(name: str, path: str, how: str, control: str, *, keys: tuple[str, str] = ("", ""),
           options: tuple[str, ...] = ()) -> Row:
    """An interaction that needs the server: from the input event to the page updated."""
    return Row(name, path, how, control, keys, PAGE_DRAWN, options=options)


UP_DOWN = ("ArrowUp", "ArrowDown")
LEFT_FIRST = ("ArrowLeft", "ArrowRight")  # a knob that starts at the top of its range
SPACE = ("Space", "Space")

ROWS: tuple[Row, ...] = (
    browser("logits: temperature", "logits_sampling", "sampling_temperature",
            f"{LOGITS} .knob[data-knob='temperature'] input", SAMPLING_DRAWN),
    browser("logits: top-k", "logits_sampling", "sampling_top_k", f"{LOGITS} .knob[data-knob='top_k'] input",
            SAMPLING_DRAWN, keys=UP_DOWN),
    browser("logits: top-p", "logits_sampling", "sampling_top_p", f"{LOGITS} .knob[data-knob='top_p'] input",
            SAMPLING_DRAWN, keys=LEFT_FIRST),
    browser("generation: temperature", "generation", "sampling_temperature",
            f"{GENERATION} .knob[data-knob='temperature'] input", SAMPLING_DRAWN),
    browser("generation: top-k", "generation", "sampling_top_k", f"{GENERATION} .knob[data-knob='top_k'] input",
            SAMPLING_DRAWN, keys=UP_DOWN),
    browser("generation: top-p", "generation", "sampling_top_p", f"{GENERATION} .knob[data-knob='top_p'] input",
            SAMPLING_DRAWN, keys=LEFT_FIRST),
    browser("overview: journey temperature", "", "sampling_temperature",
            ".tj-knob[data-knob='temperature'] input", JOURNEY_DRAWN),
    browser("positional: d_model", "positional_encoding", "pe_d_model", f"{TABLE} [data-knob=pe_d_model] input",
            LESSON_DRAWN),
    browser("positional: positions shown", "positional_encoding", "pe_positions",
            f"{TABLE} [data-knob=pe_positions] input", LESSON_DRAWN),
    browser("positional: base", "positional_encoding", "pe_base", f"{TABLE} [data-knob=pe_base] input", LESSON_DRAWN),
    browser("positional: position", "positional_encoding", "pe_position", f"{VECTOR} [data-knob=pe_position] input",
            LESSON_DRAWN, keys=UP_DOWN),
    browser("positional: wave pairs", "positional_encoding", "pe_pairs",
            f"{TABLE} [data-knob=pe_pairs] input >> nth=1", LESSON_DRAWN, keys=SPACE),
    browser("positional: RoPE angle (m)", "positional_encoding", "pe_rope_m", f"{ROPE} [data-knob=pe_rope_m] input",
            LESSON_DRAWN),
    browser("self-attention: ÷√d_k", "self_attention", "sa_scale", f"{STEPS} [data-knob=sa_scale] input",
            LESSON_DRAWN, keys=SPACE),
    browser("self-attention: causal mask", "self_attention", "sa_mask", f"{STEPS} [data-knob=sa_mask] input",
            LESSON_DRAWN, keys=SPACE),
    browser("self-attention: softmax lab scores", "self_attention", "sa_lab_scores",
            f"{LAB} [data-knob=sa_lab_scores] input", LESSON_DRAWN, keys=("1", "Backspace"), tab="self_attention.tab.lab",
            before="End"),
    browser("tokenization: BPE merge step", "tokenization", "tok_merge_step", f"{BPE} .bpe-slider", BPE_DRAWN),
    browser("embeddings: map only categories", "embeddings", "embeddings_map_only", f"{MAP} .s3-only input",
            SPACE_DRAWN, keys=SPACE),
    browser("embeddings: map PCA fit", "embeddings", "embeddings_map_fit_categories",
            f"{MAP} .s3-fit [role=radio][aria-checked=true]", SPACE_DRAWN),
    browser("multi-head: head", "multi_head_attention", "mha_head",
            f"{HEADS} [role=radio][aria-checked=true]", MHA_DRAWN),
    browser("multi-head: layer", "multi_head_attention", "mha_layer",
            f"{HEADS} [role=radio][aria-checked=true]", MHA_DRAWN, keys=("ArrowDown", "ArrowUp")),
    browser("whole model: preset", "whole_model", "wm_preset", f"{COUNTER} [data-knob='wm_preset'] select",
            CALC_DRAWN, keys=("ArrowDown", "ArrowUp")),
    browser("generation: KV memory preset", "generation", "generation_kv_preset",
            f"{KV_MEMORY} [data-knob='generation_kv_preset'] select", CALC_DRAWN, keys=("ArrowDown", "ArrowUp")),
    browser("logits: tokens shown (top-N)", "logits_sampling", "logits_sampling_top_n",
            ".st-key-logits_sampling_softmax .sl .knob[data-knob='top_n'] input", SAMPLING_DRAWN),
    browser("logits: number of draws", "logits_sampling", "logits_sampling_n_samples",
            ".st-key-logits_sampling_draws .sl .knob[data-knob='n_samples'] input", SAMPLING_DRAWN),
    browser("multi-head: scores switch", "multi_head_attention", "mha_scores", f"{HEADS} [data-knob='scores'] input",
            MHA_DRAWN, keys=SPACE),
    browser("multi-head: grid of every head", "multi_head_attention", "mha_grid", f"{HEADS} [data-knob='grid'] input",
            MHA_DRAWN + ", .mh-grid", keys=SPACE),
    server("overview: new prompt", "", "prompt", '[data-testid="stSidebar"] .st-key-w_prompt textarea'),
    server("generation: next token", "generation", "click", f"{GENERATION} button[data-action='next']"),
    server("block: ablation (residual L0)", "transformer_block", "ablate", ".st-key-tb_ablate_resid"),
    server("sidebar: model switch", "", "option", ".st-key-w_model [data-testid='stSelectbox']",
           options=("modern", "classic")),
)
PROMPTS = ("The capital of Japan is", "The cat sat on the", "法国的首都是", "Water boils at", "我喜欢吃苹果")



@dataclass
class Move:
    drawn_ms: float  # input event -> the last drawing in the row's area (-1: nothing drew there)
    frames: int  # websocket messages the page sent


def wait_idle(page, quiet_ms: float, timeout_s: float = 30) -> None:
    """Until Streamlit's run is over and nothing drew for ``quiet_ms``."""
    page.wait_for_function(
        "(quiet) => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && performance.now() - Math.max(window.__tj.last, window.__tj.moved) > quiet",
        arg=quiet_ms, timeout=timeout_s * 1000, polling=50)


def open_row(page, row: Row, base: str, quiet_ms: float) -> None:
    from tests.e2e.helpers import wait_for_app
    from ui.i18n import load_strings

    page.goto(f"{base}/{row.path}", wait_until="domcontentloaded")
    wait_for_app(page)
    if row.tab:
        page.get_by_role("tab", name=load_strings("en")[row.tab]).click()
    target = page.locator(row.control.split(" >> ")[0]).first
    target.wait_for(state="attached", timeout=90_000)
    wait_idle(page, quiet_ms * 2, timeout_s=90)


def open_list(page, control, option) -> None:
    """Open a select's list until ``option`` shows (a run that ends during the click closes it)."""
    for _ in range(4):
        control.click()
        try:
            option.wait_for(timeout=5_000)
            return
        except Exception:  # Playwright's TimeoutError: wait for the run, open it again
            page.keyboard.press("Escape")
            page.wait_for_timeout(500)
    option.wait_for(timeout=5_000)


def move(page, row: Row, i: int) -> None:
    """One student move on ``row``'s control (``i``: even or odd, the direction)."""
    control = page.locator(row.control).first
    arm = lambda: page.evaluate(ARM, row.drawn)  # noqa: E731  (just before the input event)
    if row.how == "keys":
        control.scroll_into_view_if_needed()
        control.focus()
        if row.before:
            page.keyboard.press(row.before)
        arm()
        page.keyboard.press(row.keys[i % 2])
    elif row.how == "click":  # the click scrolls the button into view first (it may be drawn anew after a run)
        control.wait_for(state="visible", timeout=30_000)
        arm()
        control.click()
    elif row.how == "prompt":
        control.fill(f"{PROMPTS[i % len(PROMPTS)]} {i}")  # always a new prompt: nothing cached
        arm()
        control.press("Control+Enter")
    elif row.how == "option":
        choice = page.get_by_role("option", name=row.options[i % len(row.options)]).first
        open_list(page, control, choice)
        arm()
        choice.click()
    elif row.how == "ablate":  # add a residual ablation (an option), then remove it (Backspace)
        control.scroll_into_view_if_needed()
        box = control.locator("input")
        if i % 2 == 0:
            option = page.get_by_role("option", name="L0", exact=True).first
            open_list(page, box, option)
            arm()
            option.click()
        else:
            box.focus()
            arm()
            page.keyboard.press("Backspace")
    else:
        raise ValueError(row.how)


def measure_row(page, row: Row, repeats: int, quiet_ms: float, base: str) -> list[Move]:
    open_row(page, row, base, quiet_ms)
    moves = []
    for i in range(repeats + 1):  # the first move warms the browser's caches (and goes inward): not counted
        move(page, row, i)
        wait_idle(page, quiet_ms)
        if row.how in ("option", "ablate"):
            page.keyboard.press("Escape")  # a list left open would catch the next click
        drawn, hit, sent = page.evaluate(
            "[window.__tj.last > window.__tj.moved && window.__tj.moved > 0 ? window.__tj.last - window.__tj.moved : -1,"
            " window.__tj.hit, window.__tj.sent]")
        if i:
            moves.append(Move(drawn if hit else -1.0, int(sent)))
    return moves


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def table(rows: tuple[Row, ...], results: dict[str, list[Move]], label: str) -> list[str]:
    """One line per row: p50 / p95 against its target, websocket frames per move, a verdict."""
    lines = [f"## {label}",
             f"{'interaction':<38} {'answers in':<8} {'n':>3} {'p50 ms':>7} {'p95 ms':>7} {'target':>8} "
             f"{'frames/move':>11}  verdict"]
    for row in rows:
        moves = results.get(row.name)
        where = "browser" if row.in_browser else "server"
        if moves is None:
            lines.append(f"{row.name:<38} {where:<8} {'-':>3} {'-':>7} {'-':>7} {row.target_ms:>6.0f}ms {'-':>11}  not measured")
            continue
        times = [m.drawn_ms for m in moves if m.drawn_ms >= 0]
        frames = max((m.frames for m in moves), default=0)
        if not times:
            lines.append(f"{row.name:<38} {where:<8} {0:>3} {'-':>7} {'-':>7} {row.target_ms:>6.0f}ms {frames:>11}  "
                         "no redraw seen")
            continue
        p50, p95 = statistics.median(times), pct(times, 0.95)
        ok = p95 <= row.target_ms and (frames == 0 if row.in_browser else frames > 0)
        missed = len(moves) - len(times)
        lines.append(f"{row.name:<38} {where:<8} {len(times):>3} {p50:>7.1f} {p95:>7.1f} {row.target_ms:>6.0f}ms "
                     f"{frames:>11}  {'✓' if ok else '✗'}" + (f" ({missed} moves drew nothing)" if missed else ""))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="now", help="as in bench/interactions.py (NAME=PATH: another copy)")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--quiet", type=float, default=400, help="ms without drawing that end a measurement")
    parser.add_argument("--only", default="", help="measure only the rows whose name contains one of these "
                        "(comma-separated, e.g. positional,multi-head)")
    args = parser.parse_args()
    wanted = [w for w in args.only.split(",") if w] or [""]
    rows = tuple(r for r in ROWS if any(w in r.name for w in wanted))
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import _chromium  # the e2e tests' system Chromium

    configs = [c for c in args.configs.split(",") if c]
    print(f"# browser latency: {args.repeats} moves per row, headless Chromium; load {load_average()}", flush=True)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=_chromium(), headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        for config in configs:
            label = config.split("=", 1)[0]
            proc, url = start(config)
            results: dict[str, list[Move]] = {}
            try:
                for row in rows:  # a fresh tab per row: no state of the row before
                    context = chromium.new_context(viewport={"width": 1366, "height": 900}, locale="en-US")
                    context.add_init_script(INIT_SCRIPT)
                    page = context.new_page()
                    try:
                        results[row.name] = measure_row(page, row, args.repeats, args.quiet, url)
                        print(f"# {label}: {row.name}: " + ", ".join(
                            f"{m.drawn_ms:.0f} ms/{m.frames} frames" for m in results[row.name]), flush=True)
                    except Exception as err:  # a control that moved: say which, keep measuring the rest
                        print(f"# {label}: {row.name}: not measured ({type(err).__name__}: {err})"[:300], flush=True)
                    finally:
                        context.close()
            finally:
                proc.terminate()
                proc.wait(20)
            for line in table(rows, results, f"{label}: input event → redrawn, p50 / p95 over {args.repeats} moves"):
                print(line, flush=True)
        chromium.close()
    print(f"# load {load_average()}")


if __name__ == "__main__":
    main()
