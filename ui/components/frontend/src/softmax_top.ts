// The Logits page's first section in the browser: "Tokens to show (N)" picks how many of the top
// tokens get a bar; the metrics (top token, its probability, the mass outside the top N, the
// entropy) and the bars follow with no websocket frame. Python sends the 30 most probable tokens'
// probabilities and logits once (core.engine.sampling.softmax, float64 as JSON numbers) with the
// whole distribution's entropy; the browser shows the first N and adds up the rest as one bar,
// 1 − Σ top N, exactly as ui/sections/logits_sampling.py did. The N knob is durable
// (knob_state.ts) and is announced to the knobs' lab below, which shows the same N tokens.
// Strings go in through textContent or attributes only.

import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";
import { knobSlider } from "./knob_slider";

export interface TopNSpec extends KnobSpec { min: number; max: number }
export interface SoftmaxData {
  view: "softmax";
  top_n: TopNSpec; // logits_sampling_top_n
  shown: { ids: number[]; labels: string[] }; // the most probable tokens, best first (max N of them)
  probs: number[]; // their probabilities over the whole vocabulary (core's softmax)
  logits: number[]; // their logits
  entropy: number; // core's entropy_bits of the whole distribution
  vocab_size: number;
  labels: Record<string, string>;
  presenter: boolean;
}

// The knobs' lab (sampling_lab.ts) listens: the two components share N without the server.
export const TOP_N_EVENT = "tj-sampling-top-n";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
const fill = (template: string, values: Record<string, string | number>) =>
  template.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m));
const grouped = (n: number) => n.toLocaleString("en-US");

/** The mass outside the first n shown tokens, as Python computes it: 1 − their sum. */
export function tailMass(probs: number[], n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += probs[i];
  return 1 - s;
}

/** A valid N for this page (an integer in the knob's range), else the server's value. */
export function fitTopN(spec: TopNSpec, value: number, available: number): number {
  const high = Math.min(spec.max, available);
  return Number.isInteger(value) && value >= spec.min && value <= high ? value : Math.min(Math.max(spec.value, spec.min), high);
}

export function mountSoftmax(data: SoftmaxData, parentElement: HTMLElement | ShadowRoot): () => void {
  const L = (name: string) => data.labels[name] ?? name;
  const spec = data.top_n;
  let n = fitTopN(spec, restoreKnob(spec), data.shown.ids.length);
  saveKnob(spec, n);

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("sl")) old.remove();
  const root = el("div", "sl sl-softmax");
  root.setAttribute("data-testid", "softmax-top");
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);

  const row = el("div", "sl-knobs");
  row.append(knobSlider({ id: "top_n", label: L("top_n"), help: L("top_n_help"), min: spec.min,
    max: Math.min(spec.max, data.shown.ids.length), step: 1, value: n, format: (v) => String(v), onInput: (v) => move(v) }));
  const metrics = el("div", "sl-metrics");
  const chart = el("figure", "sl-chart");
  root.append(row, metrics, chart);

  function move(v: number): void {
    n = v;
    saveKnob(spec, v);
    draw();
    window.dispatchEvent(new CustomEvent(TOP_N_EVENT, { detail: v }));
  }

  // A metric's help is its description (read with it, shown under it): no extra Tab stop.
  function metric(id: string, label: string, value: string, help?: string): HTMLElement {
    const m = el("div", "sl-metric");
    m.dataset.metric = id;
    m.append(el("div", "sl-metric-label", label), el("div", "sl-metric-value", value));
    if (help) m.append(el("div", "sl-metric-help", help));
    return m;
  }

  function draw(): void {
    const vocab = data.vocab_size;
    const tail = tailMass(data.probs, n);
    const rest = grouped(vocab - n);
    metrics.replaceChildren(
      metric("top_token", L("top_token"), data.shown.labels[0] ?? ""),
      metric("top_prob", L("top_prob"), (data.probs[0] ?? 0).toFixed(4)),
      metric("tail", L("tail"), tail.toFixed(4), fill(L("tail_help"), { n: rest })),
      metric("entropy", L("entropy"), data.entropy.toFixed(2), fill(L("entropy_help"), { max: Math.log2(vocab).toFixed(1) })),
    );
    metrics.dataset.tail = String(tail);

    const title = fill(L("chart_title"), { n, vocab: grouped(vocab) });
    const legend = el("div", "sl-legend");
    legend.append(el("span", "sl-legend-title", L("kind_title") + ":"), el("span", "sl-key after", fill(L("kind_top"), { n })),
      el("span", "sl-key tail", L("kind_tail")));
    const values = [...data.probs.slice(0, n), tail];
    const axisMax = Math.min(1, Math.max(1e-9, ...values) * 1.15); // a probability axis ends at 1 at most
    const grid = el("div", "sl-grid");
    grid.setAttribute("role", "table");
    grid.setAttribute("aria-label", title);
    const head = el("div", "sl-row head");
    head.setAttribute("role", "row");
    for (const text of [L("axis_token"), L("axis_prob"), L("axis_logit")]) {
      const c = el("span", "sl-cell", text);
      c.setAttribute("role", "columnheader");
      head.append(c);
    }
    grid.append(head);
    const rows: [string, number, string, string][] = data.shown.ids.slice(0, n).map((id, i) =>
      [data.shown.labels[i], data.probs[i], data.logits[i].toFixed(3), String(id)]);
    rows.push([fill(L("tail_label"), { n: rest }), tail, "—", ""]);
    for (const [label, p, logit, id] of rows) {
      const r = el("div", "sl-row" + (id ? "" : " tail"));
      r.setAttribute("role", "row");
      if (id) r.dataset.id = id;
      r.dataset.p = String(p);
      const name = el("span", "sl-cell sl-token", label);
      name.setAttribute("role", "rowheader");
      const bar = el("span", "sl-cell sl-bars");
      bar.setAttribute("role", "cell");
      const line = el("span", "sl-bar-line");
      const b = el("span", "sl-bar " + (id ? "after" : "tail"));
      b.style.width = `${(100 * p / axisMax).toFixed(2)}%`;
      line.append(b, el("span", "sl-bar-value", p.toFixed(4)));
      bar.append(line);
      const lg = el("span", "sl-cell sl-logit", logit);
      lg.setAttribute("role", "cell");
      r.append(name, bar, lg);
      grid.append(r);
    }
    chart.replaceChildren(el("figcaption", "sl-title", title), legend, grid);
    root.dataset.topN = String(n);
  }

  draw();
  root.dataset.ready = "1";
  return () => {};
}
