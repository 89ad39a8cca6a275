// The sampling knobs (Logits page, Generation's preview): temperature, top-k and top-p move in the
// browser and redraw the before/after bars, the metrics, the cut summary and the table with the
// same numbers as core/engine/sampling.py (sampling.ts), sending nothing to the server. A server
// action that needs the knobs (Draw, Next token, Run, Reset) is a trigger that carries them
// (knob_state.ts / ui/components/knobs.py). Python: ui/components/sampling_lab.py.
// Every user-visible string goes in through textContent or an attribute, never as markup.

import { decodeLogits, distribution, entropyBits, Knobs, rankLogits } from "./sampling";
import { KnobSpec, knobValues, restoreKnob, saveKnob } from "./knob_state";
import { knobSlider } from "./knob_slider";
import { fitTopN, mountSoftmax, SoftmaxData, TOP_N_EVENT, TopNSpec } from "./softmax_top";
import { DrawsData, KNOB_EVENT, mountDraws } from "./draws_view";

interface Spec extends KnobSpec { min: number; max: number }
interface Action { kind: string; label: string; primary?: boolean; disabled?: boolean }
interface Data {
  knobs: Spec[]; // sampling_temperature, sampling_top_k, sampling_top_p
  logits: string; // base64 float32, the whole vocabulary (one position)
  shown: { ids: number[]; labels: string[] }; // the bars: most probable first at T = 1
  top_label: string; // the best logit's token (always the top token after the knobs)
  labels: Record<string, string>;
  actions: Action[]; // buttons that send {kind, knobs} (Draw; Next / Run / Reset)
  parts: string[]; // which parts to draw: "note", "metrics", "chart", "cuts", "table"
  presenter: boolean;
  top_n?: TopNSpec; // the Logits page: show the first N of `shown` (the softmax section's N, shared)
  extra?: KnobSpec[]; // other durable knobs of the page a trigger carries too (moved in draws_view.ts)
  view?: "softmax" | "draws"; // the Logits page's first section (softmax_top.ts) or its draws (draws_view.ts)
}
interface Component {
  data: Data;
  parentElement: HTMLElement | ShadowRoot;
  setTriggerValue: (name: string, value: unknown) => void;
}

const NAMES = { temperature: "sampling_temperature", topK: "sampling_top_k", topP: "sampling_top_p" };

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m));
}
// The translated texts use **bold** only: render it as <strong>, everything else as text.
function rich(node: HTMLElement, text: string): HTMLElement {
  node.replaceChildren();
  text.split("**").forEach((part, i) => node.append(i % 2 ? el("strong", undefined, part) : document.createTextNode(part)));
  return node;
}
const grouped = (n: number) => n.toLocaleString("en-US");
const signed = (x: number, digits: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(digits);

// Decoding and ranking 6k–50k logits costs a few ms: once per prompt, not per move.
let cache: { logits: string; ranked: ReturnType<typeof rankLogits>; original: number[]; entropy0: number } | null = null;

export default function (component: Component): () => void {
  const { data, parentElement, setTriggerValue } = component;
  if (data.view === "softmax") return mountSoftmax(data as unknown as SoftmaxData, parentElement);
  if (data.view === "draws") return mountDraws(data as unknown as DrawsData, parentElement);
  const L = (name: string) => data.labels[name] ?? name;
  if (!cache || cache.logits !== data.logits) {
    const ranked = rankLogits(decodeLogits(data.logits));
    const original = distribution(ranked.values, [], { temperature: 1, topK: 0, topP: 1 }).tempered;
    cache = { logits: data.logits, ranked, original, entropy0: entropyBits(original) };
  }
  const { ranked, original, entropy0 } = cache;
  const spec = (name: string) => data.knobs.find((k) => k.name === name)!;
  const knobs: Knobs = {
    temperature: restoreKnob(spec(NAMES.temperature)),
    topK: restoreKnob(spec(NAMES.topK)),
    topP: restoreKnob(spec(NAMES.topP)),
  };
  // How many of `shown` get a bar: the softmax section's N (same durable knob, moved there).
  let topN = data.top_n ? fitTopN(data.top_n, restoreKnob(data.top_n), data.shown.ids.length) : data.shown.ids.length;
  const shownIds = () => data.shown.ids.slice(0, topN);
  const current = (name: string) => (name === NAMES.temperature ? knobs.temperature : name === NAMES.topK ? knobs.topK : knobs.topP);

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("sl")) old.remove();
  const root = el("div", "sl");
  root.setAttribute("data-testid", "sampling-lab");
  if (data.presenter) root.classList.add("presenter");
  // The exact inputs, for tests that recompute with core (a property: no 32 kB attribute in the DOM).
  (root as HTMLElement & { tjLogits?: string }).tjLogits = data.logits;
  parentElement.appendChild(root);

  // --- the knobs
  const row = el("div", "sl-knobs");
  const vocab = ranked.order.length;
  const tSpec = spec(NAMES.temperature), kSpec = spec(NAMES.topK), pSpec = spec(NAMES.topP);
  row.append(
    knobSlider({ id: "temperature", label: L("temperature"), help: L("temperature_help"), min: tSpec.min, max: tSpec.max,
      step: 0.05, value: knobs.temperature, format: (v) => v.toFixed(2), onInput: (v) => move(tSpec, v) }),
    knobSlider({ id: "top_k", label: L("top_k"), help: L("top_k_help"), kind: "number", min: kSpec.min, max: kSpec.max,
      step: 1, value: knobs.topK, format: (v) => (v === 0 ? L("off") : String(v)), onInput: (v) => move(kSpec, v) }),
    knobSlider({ id: "top_p", label: L("top_p"), help: L("top_p_help"), min: pSpec.min, max: pSpec.max,
      step: 0.05, value: knobs.topP, format: (v) => (v >= 1 ? L("off") : v.toFixed(2)), onInput: (v) => move(pSpec, v) }),
  );
  root.append(row);

  const parts = new Set(data.parts);
  const note = el("div", "sl-note");
  note.setAttribute("role", "status");
  const metrics = el("div", "sl-metrics");
  const chart = el("figure", "sl-chart");
  const cuts = el("div", "sl-cuts");
  const table = el("details", "sl-table");
  if (parts.has("note")) root.append(note);
  if (parts.has("metrics")) root.append(metrics);
  if (parts.has("chart")) root.append(chart);
  if (parts.has("cuts")) root.append(cuts);
  if (parts.has("table")) root.append(table);

  // --- server actions: each trigger carries the knobs as shown now
  const bar = el("div", "sl-actions");
  const stale = el("div", "sl-stale");
  for (const action of data.actions) {
    const button = el("button", "sl-btn" + (action.primary ? " primary" : ""), action.label);
    button.type = "button";
    button.dataset.action = action.kind;
    button.disabled = !!action.disabled;
    button.addEventListener("click", () => setTriggerValue("action", { kind: action.kind, knobs: sentKnobs() }));
    bar.append(button);
  }
  if (data.actions.length) root.append(bar, stale);

  // What a trigger carries: the knobs as shown now (with N where the page has it).
  function sentKnobs(): Record<string, number> {
    const out = knobValues(data.knobs, current);
    if (data.top_n) out[data.top_n.name] = topN;
    for (const [name, v] of extra) out[name] = v;
    return out;
  }
  const extra = new Map<string, number>((data.extra ?? []).map((k) => [k.name, restoreKnob(k)]));
  const onKnob = (e: Event) => {
    const { name, value } = (e as CustomEvent<{ name: string; value: number }>).detail;
    if (extra.has(name) && Number.isFinite(value)) extra.set(name, value);
  };
  window.addEventListener(KNOB_EVENT, onKnob);
  const onTopN = (e: Event) => {
    const v = (e as CustomEvent<number>).detail;
    if (!data.top_n || !Number.isInteger(v) || v === topN) return;
    topN = fitTopN(data.top_n, v, data.shown.ids.length);
    redraw();
  };
  window.addEventListener(TOP_N_EVENT, onTopN);

  function move(s: Spec, v: number): void {
    if (s.name === NAMES.temperature) knobs.temperature = v;
    else if (s.name === NAMES.topK) knobs.topK = v;
    else knobs.topP = v;
    saveKnob(s, v);
    redraw();
  }

  function redraw(): void {
    const d = distribution(ranked.values, [], knobs);
    const at = (id: number) => ranked.rankOf[id];
    const status = shownIds().map((id) => {
      const c = d.cutBy[at(id)];
      return c === "k" ? L("status_top_k") : knobs.temperature === 0 && d.final[at(id)] === 0 ? L("status_greedy")
        : c === "p" ? L("status_top_p") : L("status_kept");
    });
    const T = knobs.temperature;
    root.dataset.knobs = JSON.stringify(knobs); // for tests and the latency bench: what is drawn now
    if (parts.has("note")) {
      note.className = "sl-note" + (T === 0 ? " info" : "");
      rich(note, T === 0 ? L("greedy") : T < 1 ? fill(L("sharper"), { t: T.toFixed(2) }) : T > 1 ? fill(L("flatter"), { t: T.toFixed(2) }) : "");
    }
    if (parts.has("metrics")) drawMetrics(d.final);
    if (parts.has("chart")) drawChart(d.final, status);
    if (parts.has("cuts")) drawCuts(d);
    if (parts.has("table")) drawTable(d, status);
    const moved = data.knobs.some((s) => current(s.name) !== s.value);
    stale.textContent = moved && L("stale") !== "stale" ? L("stale") : "";
    root.classList.toggle("moved", moved);
  }

  function metric(label: string, value: string, delta: string | null, help?: string): HTMLElement {
    const m = el("div", "sl-metric");
    if (help) m.title = help;
    m.append(el("div", "sl-metric-label", label), el("div", "sl-metric-value", value));
    if (delta) m.append(el("div", "sl-metric-delta", delta));
    return m;
  }
  function drawMetrics(final: number[]): void {
    const change = final[0] - original[0];
    let candidates = 0;
    for (const p of final) if (p > 0) candidates++;
    const h = entropyBits(final);
    metrics.replaceChildren(
      metric(L("final_top"), data.top_label, null),
      metric(L("final_top_prob"), final[0].toFixed(4), Math.abs(change) >= 5e-5 ? signed(change, 4) : null),
      metric(L("candidates"), grouped(candidates), null, fill(L("candidates_help"), { vocab: grouped(vocab) })),
      metric(L("entropy_final"), h.toFixed(2), Math.abs(h - entropy0) >= 0.005 ? signed(h - entropy0, 2) : null),
    );
    metrics.dataset.candidates = String(candidates);
    metrics.dataset.entropy = String(h);
  }

  function drawChart(final: number[], status: string[]): void {
    const ids = shownIds();
    const before = ids.map((id) => original[ranked.rankOf[id]]);
    const after = ids.map((id) => final[ranked.rankOf[id]]);
    const top = Math.max(...before, ...after, 1e-9);
    const axisMax = Math.min(1, Math.ceil(top * 10) / 10); // probability axes end at 1 at most
    const title = fill(L("compare_title"), { t: knobs.temperature.toFixed(2), k: knobs.topK ? knobs.topK : L("off"), p: knobs.topP.toFixed(2) });
    const caption = el("figcaption", "sl-title", title);
    const legend = el("div", "sl-legend");
    legend.append(el("span", "sl-legend-title", L("series") + ":"), el("span", "sl-key before", L("original")), el("span", "sl-key after", L("after")));
    const grid = el("div", "sl-grid");
    grid.setAttribute("role", "table");
    grid.setAttribute("aria-label", title);
    const head = el("div", "sl-row head");
    head.setAttribute("role", "row");
    for (const text of [L("axis_token"), L("axis_prob") + ` (0 – ${axisMax.toFixed(1)})`, L("status")]) {
      const c = el("span", "sl-cell", text);
      c.setAttribute("role", "columnheader");
      head.append(c);
    }
    grid.append(head);
    ids.forEach((id, i) => {
      const r = el("div", "sl-row" + (status[i] === L("status_kept") ? "" : " cut"));
      r.setAttribute("role", "row");
      r.dataset.id = String(id);
      r.dataset.before = String(before[i]);
      r.dataset.after = String(after[i]);
      const name = el("span", "sl-cell sl-token", data.shown.labels[i]);
      name.setAttribute("role", "rowheader");
      const bars = el("span", "sl-cell sl-bars");
      bars.setAttribute("role", "cell");
      bars.title = `${data.shown.labels[i]}: ${L("original")} ${before[i].toFixed(4)} → ${L("after")} ${after[i].toFixed(4)}`;
      for (const [cls, p] of [["before", before[i]], ["after", after[i]]] as const) {
        const line = el("span", "sl-bar-line");
        const b = el("span", `sl-bar ${cls}`);
        b.style.width = `${(100 * p / axisMax).toFixed(2)}%`;
        line.append(b, el("span", "sl-bar-value", p >= 0.0005 ? p.toFixed(3) : p > 0 ? p.toExponential(1) : "0"));
        bars.append(line);
      }
      const st = el("span", "sl-cell sl-status", status[i]);
      st.setAttribute("role", "cell");
      r.append(name, bars, st);
      grid.append(r);
    });
    chart.replaceChildren(caption, legend, grid);
  }

  function drawCuts(d: ReturnType<typeof distribution>): void {
    let nK = 0, nP = 0, massK = 0, massP = 0;
    d.cutBy.forEach((c, r) => {
      if (c === "k") { nK++; massK += d.tempered[r]; }
      else if (c === "p") { nP++; massP += d.afterK[r]; }
    });
    const k = el("p"), p = el("p");
    rich(k, knobs.topK ? fill(L("cut_top_k"), { n: grouped(nK), mass: massK.toFixed(4) }) : L("cut_top_k_off"));
    rich(p, knobs.topP < 1 ? fill(L("cut_top_p"), { n: grouped(nP), mass: massP.toFixed(4) }) : L("cut_top_p_off"));
    cuts.replaceChildren(k, p);
  }

  function drawTable(d: ReturnType<typeof distribution>, status: string[]): void {
    const open = table.open;
    const summary = el("summary", undefined, L("table_title"));
    const t = el("table");
    const hr = el("tr");
    for (const key of ["table_token", "table_id", "table_logit", "table_original", "table_tempered", "table_after_k", "table_final", "table_status"]) {
      const th = el("th", undefined, L(key));
      th.scope = "col";
      hr.append(th);
    }
    t.append(el("thead"));
    t.tHead!.append(hr);
    const body = el("tbody");
    shownIds().forEach((id, i) => {
      const r = ranked.rankOf[id];
      const tr = el("tr");
      for (const text of [data.shown.labels[i], String(id), ranked.values[r].toFixed(3), original[r].toFixed(5),
        d.tempered[r].toFixed(5), d.afterK[r].toFixed(5), d.final[r].toFixed(5), status[i]]) tr.append(el("td", undefined, text));
      body.append(tr);
    });
    t.append(body);
    table.replaceChildren(summary, t, el("p", "sl-caption", L("table_caption")));
    table.open = open;
  }

  redraw();
  root.dataset.ready = "1";
  return () => { // the next call replaces the root (above)
    window.removeEventListener(TOP_N_EVENT, onTopN);
    window.removeEventListener(KNOB_EVENT, onKnob);
  };
}
