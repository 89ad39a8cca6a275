// The Positional-encoding page's knobs, answered in the browser: the sinusoidal table (d_model,
// number of positions, base, the pairs drawn as waves), one position's vector and the relative
// check PE(pos + k) = M_k · PE(pos). One components-v2 module mounted three times (data.view);
// the three share the page's knob values (lessons/bus.ts), so moving d_model redraws all three
// with zero websocket messages. The math is lessons/positional.ts (≡ core/lessons/positional.py).

import * as bus from "./lessons/bus";
import { heatmap, lineChart, table, Tooltip } from "./lessons/charts";
import { choiceSlider, integerBox, multiPick, slider } from "./lessons/controls";
import { el, richText } from "./lessons/dom";
import { LessonComponent, mountLesson } from "./lessons/mount";
import { fill, pyComma, pyExp, pyFixed, pyG, signed } from "./lessons/format";
import { checkRelativePosition, pairDivisors, pairPeriods, sinusoidalTable, sinusoidalVector } from "./lessons/positional";
import { RopeData, ropeView } from "./rope_view";

const PAGE = "positional_encoding";

interface Limits {
  d_model: [number, number, number];
  positions: [number, number];
  bases: number[];
  position: [number, number];
  offset: [number, number];
  max_pairs: number;
  matrix_shown: number;
  table_rows: number;
}
interface SinData {
  view: "table" | "vector" | "relative";
  knobs: bus.LessonKnob[]; // the server's durable values (pe_d_model, …)
  limits: Limits;
  labels: Record<string, string>;
  presenter: boolean;
}
type Data = SinData | RopeData;

interface Knobs { d: number; n: number; base: number; pairs: number[] | null; pos: number; offset: number }

const inRange = (v: unknown, lo: number, hi: number, step = 1): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi && (v - lo) % step === 0;

/** The knob values, each checked again here (a link or a stale tab may hold anything). */
function read(values: Record<string, unknown>, lim: Limits): Knobs {
  const [dLo, dHi, dStep] = lim.d_model;
  const d = inRange(values.pe_d_model, dLo, dHi, dStep) ? values.pe_d_model : 8;
  const n = inRange(values.pe_positions, lim.positions[0], lim.positions[1]) ? values.pe_positions : 64;
  const base = lim.bases.includes(values.pe_base as number) ? (values.pe_base as number) : 10000;
  const raw = values.pe_pairs;
  let pairs: number[] | null = null;
  if (Array.isArray(raw) && raw.length <= lim.max_pairs && raw.every((k) => inRange(k, 0, 255))) pairs = raw as number[];
  const pos = inRange(values.pe_position, lim.position[0], lim.position[1]) ? values.pe_position : 3;
  const offset = inRange(values.pe_offset, lim.offset[0], lim.offset[1]) ? values.pe_offset : 2;
  return { d, n, base, pairs, pos, offset };
}

/** The pairs drawn: the chosen ones that exist at this width, else the default three. */
export function shownPairs(pairs: number[] | null, d: number): number[] {
  const half = d / 2;
  const fallback = Array.from(new Set([0, Math.floor(half / 4), half - 1])).sort((a, b) => a - b);
  if (pairs === null) return fallback;
  const kept = pairs.filter((k) => k < half);
  return kept.length || pairs.length === 0 ? kept.sort((a, b) => a - b) : fallback;
}

function commaG(x: number): string {
  // Python's f"{x:,.4g}": grouping only when there is no exponent.
  const g = pyG(x, 4);
  if (g.includes("e")) return g;
  const [whole, frac] = g.split(".");
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (frac !== undefined ? "." + frac : "");
}

export default function mount(component: LessonComponent<Data>): () => void {
  return mountLesson(component, PAGE, "pe", (data, L, controls, out, tip, root) => data.view === "rope"
    ? ropeView(data, L, controls, out, tip, root) : sinusoidal(data, L, controls, out, tip));
}

function sinusoidal(data: SinData, L: (k: string) => string, controls: HTMLElement, out: HTMLElement,
                    tip: Tooltip): { redraw: () => void; follows: string[] } {
  const knobs = () => read(bus.values(PAGE), data.limits);
  const set = (changes: Record<string, unknown>) => bus.set(PAGE, changes);
  let redraw: () => void;
  let follows: string[];
  if (data.view === "table") {
    const k = knobs();
    const [dLo, dHi, dStep] = data.limits.d_model;
    controls.append(
      slider({ knob: "pe_d_model", label: L("d_model"), min: dLo, max: dHi, step: dStep, value: k.d, help: L("d_model_help"),
               onInput: (v) => set({ pe_d_model: v }) }),
      slider({ knob: "pe_positions", label: L("positions"), min: data.limits.positions[0], max: data.limits.positions[1],
               step: 1, value: k.n, onInput: (v) => set({ pe_positions: v }) }),
      choiceSlider({ knob: "pe_base", label: L("base"), options: data.limits.bases, value: k.base, help: L("base_help"),
                     format: (b) => pyComma(b), onInput: (v) => set({ pe_base: v }) }),
    );
    const pickBox = el("div", "tl-pick");
    const chart = el("div");
    const waves = el("div");
    const freq = el("div");
    out.append(chart, el("p", "tl-caption", L("heatmap_caption")), pickBox, waves, freq);
    let pickFor = "";
    let tableFor = "";
    let pe: Float64Array = new Float64Array(0);
    redraw = () => {
      const k = knobs();
      const periods = pairPeriods(k.d, k.base);
      const shown = shownPairs(k.pairs, k.d);
      const tableKey = `${k.n}|${k.d}|${k.base}`;
      if (tableKey !== tableFor) { // a new pair choice redraws the waves only
        tableFor = tableKey;
        pe = sinusoidalTable(k.n, k.d, k.base);
        chart.replaceChildren(heatmap({
        values: pe, rows: k.n, cols: k.d, testid: "pe-heatmap",
        title: fill(L("heatmap_title"), { n: k.n, d: k.d, base: pyComma(k.base) }),
        xTitle: L("axis_dimension"), yTitle: L("axis_position"), valueTitle: L("axis_value"),
        scale: { symmetric: true, low: -1, high: 1 }, format: (v) => signed(v, 4),
        maxHeight: Math.min(700, 260 + 4 * k.n) - 60,
        }, tip));
      }
      const pickKey = `${k.d}|${k.base}`;
      if (pickKey !== pickFor) { // the picker's options depend on d and base only
        pickFor = pickKey;
        const half = k.d / 2;
        pickBox.replaceChildren(multiPick({
          knob: "pe_pairs", label: L("pairs"), options: Array.from({ length: half }, (_, i) => i), chosen: shown,
          max: data.limits.max_pairs,
          format: (i) => fill(L("pair_option"), { k: i, a: 2 * i, b: 2 * i + 1, period: pyComma(periods[i], 1) }),
          onChange: (v) => set({ pe_pairs: v }),
        }));
      }
      waves.replaceChildren();
      if (shown.length) {
        const xs = Array.from({ length: k.n }, (_, i) => i);
        const series = shown.flatMap((pair, c) => [0, 1].map((o) => ({
          label: fill(L("series_label"), { dim: 2 * pair + o, fn: o ? "cos" : "sin", k: pair }),
          ys: xs.map((p) => pe[p * k.d + 2 * pair + o]), dashed: o === 1, colour: c,
          extra: `${L("period")} ${pyFixed(periods[pair], 1)}`,
        })));
        waves.append(lineChart({
          xs, series, testid: "pe-waves", title: L("waves_title"), xTitle: L("axis_position"), yTitle: L("axis_value"),
          legendTitle: L("series"), format: (v) => pyFixed(v, 4), yDomain: [-1.05, 1.05], height: 320,
        }, tip, out.closest(".tl")?.classList.contains("dark") ?? false));
      }
      freq.replaceChildren(richText("p", "tl-text", fill(L("frequencies"), {
        fast: pyFixed(periods[0], 2), slow: pyComma(periods[periods.length - 1], 0), last: k.d / 2 - 1,
      })));
    };
    follows = ["pe_d_model", "pe_positions", "pe_base", "pe_pairs"];
  } else if (data.view === "vector") {
    const k = knobs();
    controls.append(integerBox({ knob: "pe_position", label: L("position"), min: data.limits.position[0],
                                 max: data.limits.position[1], value: k.pos,
                                 invalid: fill(L("invalid"), { min: data.limits.position[0], max: data.limits.position[1] }),
                                 onInput: (v) => set({ pe_position: v }) }));
    redraw = () => {
      const k = knobs();
      const vector = sinusoidalVector(k.pos, k.d, k.base);
      const divisors = pairDivisors(k.d, k.base);
      const rows = Array.from(vector, (v, i) => ({
        cells: [String(i), String(i >> 1), `${i % 2 === 0 ? "sin" : "cos"}(${k.pos} / ${commaG(divisors[i >> 1])})`, signed(v)],
        values: [null, null, null, v],
      }));
      const shown = Array.from(vector.slice(0, 16), (v) => signed(v)).join(", ") + (k.d > 16 ? ", …" : "");
      out.replaceChildren(
        table([L("col_dim"), L("col_pair"), L("col_formula"), L("col_value")], rows, "pe-vector", rows.length > data.limits.table_rows),
        richText("p", "tl-text pe-row", fill(L("row"), { pos: k.pos, d: k.d, row: `[${shown}]` })),
      );
    };
    follows = ["pe_d_model", "pe_base", "pe_position"];
  } else {
    const k = knobs();
    controls.append(integerBox({ knob: "pe_offset", label: L("offset"), min: data.limits.offset[0], max: data.limits.offset[1],
                                 value: k.offset,
                                 invalid: fill(L("invalid"), { min: data.limits.offset[0], max: data.limits.offset[1] }),
                                 onInput: (v) => set({ pe_offset: v }) }));
    redraw = () => {
      const k = knobs();
      if (k.pos + k.offset < 0) {
        const warn = el("div", "tl-warning", fill(L("negative"), { pos: k.pos, k: k.offset }));
        warn.setAttribute("role", "alert");
        out.replaceChildren(warn);
        return;
      }
      const check = checkRelativePosition(k.pos, k.offset, k.d, k.base);
      const shown = Math.min(k.d, data.limits.matrix_shown);
      const corner = new Float64Array(shown * shown);
      for (let r = 0; r < shown; r++) for (let c = 0; c < shown; c++) corner[r * shown + c] = check.matrix[r * k.d + c];
      const dims = Array.from({ length: shown }, (_, i) => String(i));
      const titleKey = shown === k.d ? "matrix_title" : "matrix_title_part";
      const left = el("div", "tl-col-wide");
      left.append(heatmap({
        values: corner, rows: shown, cols: shown, rowLabels: dims, colLabels: dims, testid: "pe-matrix",
        title: fill(L(titleKey), { k: k.offset, d: k.d, shown }), xTitle: L("input_dim"), yTitle: L("output_dim"),
        valueTitle: L("axis_value"), scale: { symmetric: true, low: -1, high: 1 }, format: (v) => signed(v, 3),
        cell: Math.max(14, Math.min(36, Math.floor(320 / shown))), tableLabel: L("numbers"), showNumbers: true,
      }, tip));
      const right = el("div", "tl-col");
      const rows = Array.from(check.pePosition, (a, i) => ({
        cells: [String(i), signed(a, 4), signed(check.rotated[i], 4), signed(check.peTarget[i], 4)],
        values: [null, a, check.rotated[i], check.peTarget[i]],
      }));
      const metric = el("div", "tl-metric");
      metric.append(el("div", "tl-metric-label", L("error")), el("div", "tl-metric-value", pyExp(check.maxAbsError, 1)));
      metric.dataset.value = String(check.maxAbsError);
      right.append(table([L("col_dim"), `PE(${k.pos})`, `M_${k.offset}·PE(${k.pos})`, `PE(${k.pos + k.offset})`], rows,
                         "pe-relative", rows.length > data.limits.table_rows), metric);
      const cols = el("div", "tl-columns");
      cols.append(left, right);
      out.replaceChildren(cols, el("p", "tl-caption", fill(L("caption"), { k: k.offset })));
    };
    follows = ["pe_d_model", "pe_base", "pe_position", "pe_offset"];
  }
  return { redraw, follows };
}
