"""Slider → chart updated, as a student sees it in Chromium: server, transport and drawing.

A server is started as in ``bench/interactions.py`` (one process, loopback; ``--configs``
``NAME=PATH`` runs another copy of the app, e.g. a snapshot from before a change, so both are
measured in one run). Headless Chromium (Playwright, the e2e tests' browser) opens a page, and
for each interaction below moves the control with the keyboard, like a student, ``--repeats``
times. Before each move a small script in the page notes the time; from then on it records
the last moment any chart drew: a DOM change inside a Vega-Lite or Plotly chart, or a call
that paints a canvas (Vega draws on a canvas, so a data-only redraw changes no DOM node).
The latency is that last drawing time minus the move, once the page has been quiet for
``--quiet`` ms and Streamlit's status widget says the run is over. The page also notes when
the last websocket message of the rerun arrived: "server" is that time (script, Streamlit's
serialisation and transport), "browser" the drawing after it (React, Vega/Plotly, layout).

The move's time is that of the student's input event in the page (the key, or the press on the
option), not the moment the driver is asked to act (Playwright waits for the target to be stable
first: 40-60 ms that earlier runs of this bench counted).

Interactions: the logits temperature slider, the BPE merge slider (Tokenization), the
Multi-head head select, the Transformer block's layer select (its drawing and charts), a new
prompt on the Overview (its diagram; Graphviz or SVG). Browser knobs (components that redraw in
their shadow root, e.g. the sampling knobs of Logits and Generation) count too: the script
watches every shadow root as it is attached, and "drawn" is the animation frame after their
DOM changed. "frames" is how many websocket messages the page sent per move (0 for a knob that
answers in the browser).

Run:  .venv/bin/python bench/browser_latency.py [--repeats 8] [--configs before=/tmp/before,freeze] [--only block]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import load_average  # noqa: E402
from bench.interactions import start  # noqa: E402

# Recorded in the page: when the move happened and when a chart last drew.
INIT_SCRIPT = """
(() => {
  const tj = window.__tj = {last: 0, moved: 0, message: 0, armed: false, sent: 0};
  // The move starts at the student's own input event (the key or the press on the option), not
  // when the test driver is asked to act: Playwright first waits for the target to be stable
  // (two animation frames) and scrolls, 40-60 ms that no student waits for.
  const started = () => { if (tj.armed) { tj.moved = performance.now(); tj.armed = false; } };
  for (const type of ['keydown', 'pointerdown']) window.addEventListener(type, started, true);
  const NativeSocket = window.WebSocket;  // the last message's arrival: the server's share ends there
  window.WebSocket = function (...args) {
    const socket = new NativeSocket(...args);
    socket.addEventListener('message', () => { tj.message = performance.now(); });
    const send = socket.send.bind(socket);
    socket.send = (data) => { tj.sent += 1; return send(data); };
    return socket;
  };
  window.WebSocket.prototype = NativeSocket.prototype;
  Object.assign(window.WebSocket, NativeSocket);
  const inChart = (node) => {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    return !!(el && el.closest && el.closest('[data-testid="stVegaLiteChart"], [data-testid="stPlotlyChart"], .js-plotly-plot, .vega-embed, '
      + '.st-key-overview_diagram, [data-testid="stGraphVizChart"], .sl, .cal'));
  };
  const note = () => { tj.last = performance.now(); };
  const watch = { subtree: true, childList: true, attributes: true, characterData: true };
  const observer = new MutationObserver((records) => {
    if (records.some((r) => inChart(r.target))) { note(); requestAnimationFrame(note); }  // drawn: the next frame
  });
  const start = () => observer.observe(document.documentElement, watch);
  if (document.documentElement) start(); else document.addEventListener('DOMContentLoaded', start);
  const attachShadow = Element.prototype.attachShadow;  // components render in shadow roots
  Element.prototype.attachShadow = function (init) {
    const root = attachShadow.call(this, init);
    observer.observe(root, watch);
    return root;
  };
  for (const proto of [CanvasRenderingContext2D.prototype]) {
    for (const name of ['clearRect', 'fillRect', 'fillText', 'drawImage', 'fill', 'stroke']) {
      const original = proto[name];
      proto[name] = function (...args) { note(); return original.apply(this, args); };
    }
  }
  for (const ctx of [window.WebGLRenderingContext, window.WebGL2RenderingContext]) {
    if (!ctx) continue;
    for (const name of ['drawArrays', 'drawElements', 'clear']) {
      const original = ctx.prototype[name];
      ctx.prototype[name] = function (...args) { note(); return original.apply(this, args); };
    }
  }
})();
"""


@dataclass(frozen=True)
class Interaction:
    name: str
    path: str  # the page's url path
    kind: str  # "slider" (keyboard arrows on its thumb), "select" (another option), "button", "prompt" (sidebar),
    #            "knob-select" (a browser component's native select: another option)
    label: str  # the widget's visible label (English); for "knob-select" the select's data-knob
    tab: str = ""  # the tab it sits in, opened first (a closed tab's widgets are not on screen)


INTERACTIONS = (
    Interaction("logits: temperature slider", "logits_sampling", "slider", "Temperature T"),
    Interaction("tokenization: BPE merge slider", "tokenization", "slider", "Merges applied"),
    Interaction("multi-head: head select", "multi_head_attention", "select", "Head"),
    Interaction("block: layer select", "transformer_block", "select", "Layer"),
    # A new prompt typed in the sidebar (Ctrl+Enter): the Overview's diagram shows its tokens.
    Interaction("overview: new prompt", "", "prompt", "Prompt"),
    Interaction("self-attention: d_k slider", "self_attention", "slider", "dₖ (width of query and key)", "③ Why ÷√dₖ"),
    Interaction("positional: position m slider", "positional_encoding", "slider", "Query position m"),
    Interaction("embeddings: neighbours slider", "embeddings", "slider", "How many neighbours"),
    Interaction("whole model: preset select", "whole_model", "knob-select", "wm_preset"),
    Interaction("generation: KV memory preset", "generation", "knob-select", "generation_kv_preset"),
    Interaction("generation: next token", "generation", "button", "Next token →"),
    Interaction("logits: top-p slider", "logits_sampling", "slider", "Top-p (nucleus)"),
    Interaction("generation: temperature knob", "generation", "slider", "Temperature T"),
    Interaction("training: p(correct) slider", "training", "slider", "p(correct token)"),
)
PROMPTS = ("The capital of Japan is", "The cat sat on the", "法国的首都是", "Water boils at", "我喜欢吃苹果")
CHARTS = ('[data-testid="stVegaLiteChart"], [data-testid="stPlotlyChart"], .st-key-overview_diagram svg, '
          '[data-testid="stGraphVizChart"] svg, .sl[data-ready="1"], .cal svg')


def wait_idle(page, quiet_ms: float, timeout_s: float = 30) -> None:
    """Until Streamlit's run is over and no chart drew for ``quiet_ms``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        since = page.evaluate("performance.now() - Math.max(window.__tj.last, window.__tj.moved)")
        if not running and since > quiet_ms:
            return
        time.sleep(0.05)
    raise TimeoutError("the page did not settle")


def measure_one(page, interaction: Interaction, repeats: int, quiet_ms: float,
                base: str) -> list[tuple[float, float, int]]:
    """(drawn, last message) in ms after the move and the frames sent, for each counted move."""
    page.goto(f"{base}/{interaction.path}", wait_until="domcontentloaded")
    page.wait_for_selector(CHARTS, timeout=90_000)
    wait_idle(page, quiet_ms * 2, timeout_s=90)
    if interaction.tab:
        page.get_by_role("tab", name=interaction.tab).click()
        wait_idle(page, quiet_ms * 2, timeout_s=90)
    times = []
    for i in range(repeats + 1):  # the first move warms the browser's caches; not counted
        if interaction.kind == "slider":
            slider = page.get_by_role("slider", name=interaction.label).first
            if slider.count() == 0:  # a label Streamlit does not attach to the thumb: the widget's own
                slider = page.locator('[data-testid="stSlider"]').filter(
                    has=page.get_by_text(interaction.label, exact=True)).get_by_role("slider").first
            slider.scroll_into_view_if_needed()
            slider.focus()
            page.evaluate("window.__tj.moved = performance.now(); window.__tj.armed = true; window.__tj.last = 0;"
                          " window.__tj.message = 0; window.__tj.sent = 0")
            slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        elif interaction.kind == "button":
            button = page.locator('[data-testid="stMain"]').get_by_role("button", name=interaction.label).first
            button.scroll_into_view_if_needed()
            page.evaluate("window.__tj.moved = performance.now(); window.__tj.armed = true; window.__tj.last = 0;"
                          " window.__tj.message = 0; window.__tj.sent = 0")
            button.click()
        elif interaction.kind == "prompt":
            box = page.locator('[data-testid="stSidebar"] .st-key-w_prompt textarea')
            box.fill(f"{PROMPTS[i % len(PROMPTS)]} {i}")  # always a new prompt: nothing cached
            page.evaluate("window.__tj.moved = performance.now(); window.__tj.armed = true; window.__tj.last = 0;"
                          " window.__tj.message = 0; window.__tj.sent = 0")
            box.press("Control+Enter")
        elif interaction.kind == "knob-select":
            select = page.locator(f"[data-knob='{interaction.label}'] select").first
            select.scroll_into_view_if_needed()
            count = select.evaluate("s => s.options.length")
            page.evaluate("window.__tj.moved = performance.now(); window.__tj.armed = true; window.__tj.last = 0;"
                          " window.__tj.message = 0; window.__tj.sent = 0")
            select.select_option(index=(i + 1) % count)
        else:
            box = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(
                has=page.get_by_text(interaction.label, exact=True)).first
            box.click()
            options = page.get_by_role("option")
            options.nth((i + 1) % max(1, options.count())).wait_for(timeout=10_000)
            page.evaluate("window.__tj.moved = performance.now(); window.__tj.armed = true; window.__tj.last = 0;"
                          " window.__tj.message = 0; window.__tj.sent = 0")
            options.nth((i + 1) % options.count()).click()
        wait_idle(page, quiet_ms)
        drawn, message, sent = page.evaluate(
            "[window.__tj.last > window.__tj.moved ? window.__tj.last - window.__tj.moved : -1,"
            " window.__tj.message > window.__tj.moved ? window.__tj.message - window.__tj.moved : 0, window.__tj.sent]")
        if i and drawn >= 0:
            times.append((drawn, min(message, drawn), int(sent)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="now", help="as in bench/interactions.py (NAME=PATH: another copy)")
    parser.add_argument("--repeats", type=int, default=8)
    parser.add_argument("--quiet", type=float, default=400, help="ms without drawing that end a measurement")
    parser.add_argument("--only", default="", help="measure only the interactions whose name contains this")
    args = parser.parse_args()
    interactions = [i for i in INTERACTIONS if args.only in i.name]
    from playwright.sync_api import sync_playwright

    configs = [c for c in args.configs.split(",") if c]
    results: dict[str, dict[str, list[tuple[float, float, int]]]] = {}
    print(f"# browser latency: {args.repeats} moves each, headless Chromium; load {load_average()}", flush=True)
    with sync_playwright() as pw:
        from tests.e2e.conftest import _chromium  # the e2e tests' system Chromium

        browser = pw.chromium.launch(executable_path=_chromium(), headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        for config in configs:
            label = config.split("=", 1)[0]
            proc, url = start(config)
            try:
                context = browser.new_context(viewport={"width": 1366, "height": 900})
                context.add_init_script(INIT_SCRIPT)
                page = context.new_page()
                results[label] = {}
                for interaction in interactions:
                    try:
                        results[label][interaction.name] = measure_one(page, interaction, args.repeats, args.quiet, url)
                    except Exception as err:  # a label that moved: say which, keep measuring the rest
                        print(f"# {label}: {interaction.name}: not measured ({type(err).__name__}: {err})"[:300],
                              flush=True)
                context.close()
            finally:
                proc.terminate()
                proc.wait(20)
        browser.close()
    labels = [c.split("=", 1)[0] for c in configs]
    print(f"{'interaction':<34}" + "".join(f" | {lab + ' median / p95':>24}" for lab in labels))
    for interaction in interactions:
        row = f"{interaction.name:<34}"
        for lab in labels:
            times = sorted(drawn for drawn, _, _ in results.get(lab, {}).get(interaction.name, []))
            if not times:
                row += f" | {'-':>24}"
                continue
            p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
            row += f" | {statistics.median(times):10.0f} / {p95:6.0f} ms"
        print(row)
    # Where the time goes: until the rerun's last message arrived (server and transport), and
    # the drawing after it (the browser), medians of the same moves.
    print(f"{'  split: server / browser':<34}" + "".join(f" | {lab + ' server / browser':>24}" for lab in labels))
    for interaction in interactions:
        row = f"{interaction.name:<34}"
        for lab in labels:
            moves = results.get(lab, {}).get(interaction.name, [])
            if not moves:
                row += f" | {'-':>24}"
                continue
            server = statistics.median(message for _, message, _ in moves)
            browser_ms = statistics.median(drawn - message for drawn, message, _ in moves)
            row += f" | {server:10.0f} / {browser_ms:6.0f} ms"
        print(row)
    print(f"{'  websocket frames sent per move':<34}" + "".join(f" | {lab + ' max':>24}" for lab in labels))
    for interaction in interactions:
        moves = [results.get(lab, {}).get(interaction.name, []) for lab in labels]
        print(f"{interaction.name:<34}" + "".join(f" | {max((m[2] for m in mv), default=-1):>24}" for mv in moves))
    print(f"# load {load_average()}")


if __name__ == "__main__":
    main()
