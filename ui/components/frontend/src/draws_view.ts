// The Logits page's seeded draws in the browser: "Number of draws N" redraws the histogram and its
// caption with no websocket frame. Python sends core.engine.sampling.sample(final, n=1000, seed)
// once (for the committed knobs); N draws with that seed are exactly its first N (the generator
// draws one uniform per token in order, and the inverse CDF is the same: a unit test checks the
// prefix property on random cases). The bars follow ui/sections/logits_sampling.py's rule: the most
// probable tokens after the knobs, then any other drawn token (by id), 12 in all, and one bar for
// the rest. Strings go in through textContent or attributes only.

import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";
import { knobSlider } from "./knob_slider";

export interface DrawsSpec extends KnobSpec { min: number; max: number }
export interface DrawsData {
  view: "draws";
  n_samples: DrawsSpec; // logits_sampling_n_samples
  draws: number[]; // sample(final, n=max, seed): token ids in draw order
  top: number[]; // the most probable tokens after the knobs (final > 0), best first, at most `bars`
  probs: Record<string, number>; // final probability of every token in `top` or `draws`
  names: Record<string, string>; // their labels
  bars: number; // how many token bars at most
  seed: number;
  labels: Record<string, string>;
  presenter: boolean;
}

// Sent to the knobs' lab, so that "Draw" carries N too (sampling_lab.ts).
export const KNOB_EVENT = "tj-sampling-knob";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
const fill = (template: string, values: Record<string, string | number>) =>
  template.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m));

export interface Bars { ids: (number | null)[]; observed: number[]; expected: number[]; counts: number[] }

/** The histogram of the first n draws, bar by bar (null: the rest), as _histogram_bars builds it. */
export function histogram(data: DrawsData, n: number): { bars: Bars; counts: Map<number, number> } {
  const counts = new Map<number, number>();
  for (let i = 0; i < n; i++) counts.set(data.draws[i], (counts.get(data.draws[i]) ?? 0) + 1);
  const shown = data.top.slice(0, data.bars);
  const drawn = [...counts.keys()].sort((a, b) => a - b).filter((id) => !shown.includes(id));
  shown.push(...drawn.slice(0, Math.max(0, data.bars - shown.length)));
  const bars: Bars = { ids: [], observed: [], expected: [], counts: [] };
  let sumExpected = 0, sumCounts = 0;
  for (const id of shown) {
    const c = counts.get(id) ?? 0;
    bars.ids.push(id);
    bars.observed.push(c / n);
    bars.expected.push(data.probs[String(id)]);
    bars.counts.push(c);
  }
  for (const p of bars.expected) sumExpected += p; // Python's sum(): left to right
  for (const c of bars.counts) sumCounts += c;
  const restCount = n - sumCounts;
  const restExpected = Math.max(0, 1 - sumExpected);
  if (restCount > 0 || restExpected > 1e-6) {
    bars.ids.push(null);
    bars.observed.push(restCount / n);
    bars.expected.push(restExpected);
    bars.counts.push(restCount);
  }
  return { bars, counts };
}

/** A valid N (an integer in the knob's range), else the server's value. */
function fitN(spec: DrawsSpec, value: number, available: number): number {
  const high = Math.min(spec.max, available);
  return Number.isInteger(value) && value >= spec.min && value <= high ? value : Math.min(Math.max(spec.value, spec.min), high);
}

export function mountDraws(data: DrawsData, parentElement: HTMLElement | ShadowRoot): () => void {
  const L = (name: string) => data.labels[name] ?? name;
  const spec = data.n_samples;
  let n = fitN(spec, restoreKnob(spec), data.draws.length);
  saveKnob(spec, n);

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("sl")) old.remove();
  const root = el("div", "sl sl-draws");
  root.setAttribute("data-testid", "sampling-draws");
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);
  const row = el("div", "sl-knobs");
  row.append(knobSlider({ id: "n_samples", label: L("n_samples"), min: spec.min, max: Math.min(spec.max, data.draws.length),
    step: 1, value: n, format: (v) => String(v), onInput: (v) => move(v) }));
  const chart = el("figure", "sl-chart");
  const caption = el("p", "sl-caption");
  root.append(row, chart, caption);

  function move(v: number): void {
    n = v;
    saveKnob(spec, v);
    draw();
    window.dispatchEvent(new CustomEvent(KNOB_EVENT, { detail: { name: spec.name, value: v } }));
  }

  function draw(): void {
    const { bars, counts } = histogram(data, n);
    const title = fill(L("title"), { n, seed: data.seed });
    const legend = el("div", "sl-legend");
    legend.append(el("span", "sl-legend-title", L("series") + ":"), el("span", "sl-key after", L("observed")),
      el("span", "sl-key before", L("expected")));
    const axisMax = Math.min(1, Math.max(1e-9, ...bars.observed, ...bars.expected) * 1.15);
    const grid = el("div", "sl-grid");
    grid.setAttribute("role", "table");
    grid.setAttribute("aria-label", title);
    const head = el("div", "sl-row head");
    head.setAttribute("role", "row");
    for (const text of [L("axis_token"), L("axis_share"), L("axis_count")]) {
      const c = el("span", "sl-cell", text);
      c.setAttribute("role", "columnheader");
      head.append(c);
    }
    grid.append(head);
    bars.ids.forEach((id, i) => {
      const r = el("div", "sl-row");
      r.setAttribute("role", "row");
      r.dataset.id = id === null ? "other" : String(id);
      r.dataset.observed = String(bars.observed[i]);
      r.dataset.expected = String(bars.expected[i]);
      r.dataset.count = String(bars.counts[i]);
      const name = el("span", "sl-cell sl-token", id === null ? L("other") : data.names[String(id)] ?? String(id));
      name.setAttribute("role", "rowheader");
      const cell = el("span", "sl-cell sl-bars");
      cell.setAttribute("role", "cell");
      for (const [cls, p] of [["after", bars.observed[i]], ["before", bars.expected[i]]] as const) {
        const line = el("span", "sl-bar-line");
        const b = el("span", `sl-bar ${cls}`);
        b.style.width = `${(100 * p / axisMax).toFixed(2)}%`;
        line.append(b, el("span", "sl-bar-value", p.toFixed(3)));
        cell.append(line);
      }
      const count = el("span", "sl-cell sl-logit", String(bars.counts[i]));
      count.setAttribute("role", "cell");
      r.append(name, cell, count);
      grid.append(r);
    });
    chart.replaceChildren(el("figcaption", "sl-title", title), legend, grid);
    // the most drawn token (the lowest id among equals, as numpy's argmax) and how many differ
    let most = -1, mostCount = -1;
    for (const [id, c] of counts) if (c > mostCount || (c === mostCount && id < most)) { most = id; mostCount = c; }
    caption.textContent = fill(L("caption"), { n, seed: data.seed, token: data.names[String(most)] ?? String(most),
      count: mostCount, distinct: counts.size });
    root.dataset.n = String(n);
  }

  draw();
  root.dataset.ready = "1";
  return () => {};
}
