// The Self-attention page's knobs, answered in the browser: ÷√d_k, the causal mask and the
// query followed by hand (steps 3-6 and the hand calculation), and the softmax lab (an example
// or typed scores). Q, K, V and Q·Kᵀ come from the server once; everything these knobs change
// is lessons/attention.ts (≡ core/lessons/attention_math.py). Zero websocket messages per move.

import { attentionRest, InputProblem, multiHead, parseVector, plainNormalise, softmaxSteps } from "./lessons/attention";
import * as bus from "./lessons/bus";
import { groupedBars, heatmap, table, Tooltip } from "./lessons/charts";
import { select, toggle } from "./lessons/controls";
import { el, richText } from "./lessons/dom";
import { LessonComponent, mountLesson } from "./lessons/mount";
import { fill, num, pyFixed, pyG, short, sub, vec } from "./lessons/format";

const PAGE = "self_attention";

interface StepsData {
  view: "steps";
  knobs: bus.LessonKnob[]; // sa_scale, sa_mask, sa_query (the server's durable values)
  tokens: string[];
  q: number[][];
  k: number[][];
  v: number[][];
  scores: number[][];
  words: Record<string, string>; // {a}, {b}, {c} of the texts
  seeds_source: boolean; // the seeds' own numbers (the rounding note applies to row 0)
  labels: Record<string, string>;
  presenter: boolean;
}
interface LabData {
  view: "lab";
  knobs: bus.LessonKnob[]; // sa_lab_case, sa_lab_scores
  cases: { name: string; label: string; scores: string }[];
  labels: Record<string, string>;
  presenter: boolean;
}
interface MhData {
  view: "mh";
  knobs: bus.LessonKnob[]; // sa_mh_heads, sa_mh_scale, sa_mh_mask
  x: number[][];
  w_o: number[][];
  counts: number[]; // head counts that split d evenly
  tokens: string[];
  words: Record<string, string>;
  labels: Record<string, string>;
  presenter: boolean;
}
type Data = StepsData | LabData | MhData;

const MINUS_INF = "\u2212\u221e";
const cellG = (v: number) => (isFinite(v) ? pyG(v, 3) : v < 0 ? MINUS_INF : "∞");
const cell3 = (v: number) => (isFinite(v) ? pyFixed(v, 3) : v < 0 ? MINUS_INF : "∞");
const exact = (v: number) => (isFinite(v) ? pyG(v, 6) : v < 0 ? MINUS_INF : "∞");

function boundOf(m: number[][]): number {
  let b = 0;
  for (const row of m) for (const v of row) if (isFinite(v)) b = Math.max(b, Math.abs(v));
  return b || 1;
}
function rangeOf(m: number[][]): [number, number] {
  const finite = m.flat().filter((v) => isFinite(v));
  return finite.length ? [Math.min(0, ...finite), Math.max(1e-9, ...finite)] : [0, 1];
}

export default function mount(component: LessonComponent<Data>): () => void {
  return mountLesson(component, PAGE, "sa", (data, L, controls, out, tip, root) => data.view === "steps"
    ? { redraw: steps(data, L, controls, out, tip), follows: ["sa_scale", "sa_mask", "sa_query"] }
    : data.view === "lab"
      ? { redraw: lab(data, L, controls, out, tip, root), follows: ["sa_lab_case", "sa_lab_scores"] }
      : { redraw: heads(data, L, controls, out, tip), follows: ["sa_mh_heads", "sa_mh_scale", "sa_mh_mask"] });
}

// --- steps 3-6 and the hand calculation --------------------------------------------------

function steps(data: StepsData, L: (k: string) => string, controls: HTMLElement, out: HTMLElement, tip: Tooltip): () => void {
  const n = data.tokens.length;
  const knobs = () => {
    const v = bus.values(PAGE);
    const query = typeof v.sa_query === "number" && Number.isInteger(v.sa_query) && v.sa_query >= 0 && v.sa_query < n ? v.sa_query : 0;
    return { scale: v.sa_scale === true, causal: v.sa_mask === true, query };
  };
  const k0 = knobs();
  const queries = Array.from({ length: n }, (_, i) => i);
  controls.append(
    toggle({ knob: "sa_scale", label: L("scale"), value: k0.scale, help: L("scale_help"), onChange: (v) => bus.set(PAGE, { sa_scale: v }) }),
    toggle({ knob: "sa_mask", label: L("mask"), value: k0.causal, help: L("mask_help"), onChange: (v) => bus.set(PAGE, { sa_mask: v }) }),
    select({ knob: "sa_query", label: L("query"), options: queries, value: k0.query,
             format: (i) => `${data.tokens[i]} (${fill(L("row"), { i })})`, onChange: (v) => bus.set(PAGE, { sa_query: v }) }),
  );
  const dK = data.q[0].length;
  const tokens = data.tokens;
  const matrix = (m: number[][], testid: string, title: string, value: string, format: (v: number) => string,
                  sequential: boolean) => {
    const [lo, hi] = rangeOf(m);
    return heatmap({
      values: m.flat(), rows: m.length, cols: m[0].length, rowLabels: tokens,
      colLabels: m[0].length === n && testid !== "sa-output" ? tokens : m[0].map((_, c) => String(c + 1)),
      title, xTitle: testid === "sa-output" ? L("axis_dim") : L("axis_key"),
      yTitle: testid === "sa-output" ? L("axis_token") : L("axis_query"), valueTitle: value,
      scale: sequential ? { symmetric: false, low: lo, high: hi } : { symmetric: true, low: 0, high: boundOf(m) },
      format, tipFormat: exact, showNumbers: true, cell: 52, testid, tableLabel: L("numbers"),
    }, tip);
  };
  return () => {
    const { scale, causal, query } = knobs();
    const r = attentionRest(data.scores, data.v, dK, scale, causal);
    const parts: HTMLElement[] = [];
    const h = (key: string) => parts.push(el("h4", "", L(key)));
    h("step3");
    if (scale) {
      parts.push(el("div", "tl-formula", `QKᵀ / √dₖ = QKᵀ / √${dK} = QKᵀ / ${pyFixed(r.divisor, 3)}`));
      parts.push(matrix(r.scaled, "sa-scaled", fill(L("chart_scaled"), { d_k: dK }), L("axis_value"), cellG, false));
    } else {
      parts.push(richText("div", "tl-info", fill(L("step3_off"), { d_k: dK })));
    }
    h("step4");
    if (causal) {
      parts.push(el("p", "tl-caption", L("step4_caption")));
      parts.push(matrix(r.masked, "sa-masked", L("chart_masked"), L("axis_value"), cellG, false));
    } else {
      parts.push(richText("div", "tl-info", fill(L("step4_off"), data.words)));
    }
    h("step5");
    parts.push(el("div", "tl-formula", L("formula5")));
    parts.push(matrix(r.weights, "sa-weights", L("chart_weights"), L("axis_weight"), cell3, true));
    parts.push(el("p", "tl-caption", L("step5_caption")));
    h("step6");
    parts.push(el("div", "tl-formula", L("formula6")));
    parts.push(matrix(r.output, "sa-output", L("chart_output"), L("axis_value"), cell3, false));
    parts.push(...walkthrough(data, L, r, scale, causal, query));
    out.replaceChildren(...parts);
  };
}

function walkthrough(data: StepsData, L: (k: string) => string, r: ReturnType<typeof attentionRest>,
                     scale: boolean, causal: boolean, i: number): HTMLElement[] {
  const tokens = data.tokens;
  const parts: HTMLElement[] = [el("h4", "", fill(L("hand_title"), { token: tokens[i] }))];
  const dots = data.scores[i];
  const lines = tokens.map((_, j) => {
    const terms = data.q[i].map((a, c) => `${short(a)}×${short(data.k[j][c])}`).join(" + ");
    return `Q${sub(i)} · K${sub(j)} = ${terms} = ${short(dots[j])}   ← ${tokens[i]} → ${tokens[j]}`;
  });
  parts.push(richText("p", "tl-text", L("hand_dots")), pre(lines.join("\n"), "sa-hand-dots"));
  const row = r.masked[i];
  if (scale) parts.push(richText("p", "tl-text", fill(L("hand_scaled"), { divisor: pyFixed(r.divisor, 3), row: vec(r.scaled[i]) })));
  if (row.some((v) => v === -Infinity)) parts.push(richText("p", "tl-text", fill(L("hand_masked"), { row: vec(row) })));
  const sm = softmaxSteps(row);
  const shift = sm.shift ? ` − ${num(sm.shift)}` : "";
  const power = (s: number) => {
    const text = `${num(s)}${shift}`;
    return !shift && s >= 0 ? text : `(${text})`;
  };
  const exps = row.map((s, j) => `e^${power(s)} = ${pyFixed(sm.exps[j], 3)}`);
  exps.push(`${L("hand_sum")} = ${sm.exps.map((e) => pyFixed(e, 3)).join(" + ")} = ${pyFixed(sm.total, 3)}`);
  row.forEach((_, j) => exps.push(`softmax${sub(j)} = ${pyFixed(sm.exps[j], 3)} / ${pyFixed(sm.total, 3)} = ${pyFixed(sm.weights[j], 3)}`));
  parts.push(richText("p", "tl-text", L("hand_softmax")), pre(exps.join("\n"), "sa-hand-softmax"));
  const weights = r.weights[i];
  const outTerms = weights.map((w, j) => `${pyFixed(w, 3)} × [${data.v[j].map(short).join(", ")}]`).join(" + ");
  parts.push(richText("p", "tl-text", L("hand_output")),
             pre(`Output${sub(i)} = ${outTerms}\n        = ${vec(r.output[i])}`, "sa-hand-output"));
  const percent = weights.map((w, j) => `${tokens[j]} ${pyFixed(100 * w, 1)}%`).join(", ");
  parts.push(richText("p", "tl-text sa-hand-summary", fill(L("hand_summary"), { token: tokens[i], percent })));
  if (data.seeds_source && i === 0 && !scale && !causal) parts.push(el("p", "tl-caption", L("seed_rounding")));
  return parts;
}

function pre(text: string, testid: string): HTMLElement {
  const node = el("pre", "", text);
  node.dataset.testid = testid;
  // A worked line can be wider than a phone: it scrolls sideways, so a keyboard must reach it.
  node.tabIndex = 0;
  node.setAttribute("role", "region");
  node.setAttribute("aria-label", text.split("\n")[0].slice(0, 80));
  return node;
}

// --- the softmax lab --------------------------------------------------------------------

function lab(data: LabData, L: (k: string) => string, controls: HTMLElement, out: HTMLElement, tip: Tooltip,
             root: HTMLElement): () => void {
  const values = bus.values(PAGE);
  const byName = new Map(data.cases.map((c) => [c.name, c]));
  const caseName = typeof values.sa_lab_case === "string" && byName.has(values.sa_lab_case) ? values.sa_lab_case : data.cases[0].name;
  const text = typeof values.sa_lab_scores === "string" && values.sa_lab_scores.length <= 300
    ? values.sa_lab_scores : byName.get(caseName)!.scores;
  const input = el("input");
  input.type = "text";
  input.maxLength = 300;
  input.value = text;
  const picker = select({
    knob: "sa_lab_case", label: L("case"), options: data.cases.map((c) => c.name), value: caseName,
    format: (name) => byName.get(name)!.label,
    onChange: (name) => { input.value = byName.get(name)!.scores; bus.set(PAGE, { sa_lab_case: name, sa_lab_scores: input.value }); },
  });
  const box = el("div", "tl-field tl-text-field");
  box.dataset.knob = "sa_lab_scores";
  const label = el("label", "tl-label", L("scores"));
  input.id = `tl-lab-scores-${Math.random().toString(36).slice(2)}`;
  label.htmlFor = input.id;
  input.setAttribute("aria-description", L("scores_help"));
  input.placeholder = L("scores_help");
  input.addEventListener("input", () => bus.set(PAGE, { sa_lab_scores: input.value }));
  box.append(label, input);
  picker.style.flex = "1 1 200px";
  box.style.flex = "2 1 300px";
  controls.append(picker, box);
  return () => {
    const typed = String(bus.values(PAGE).sa_lab_scores ?? input.value);
    let scores: number[];
    let steps: ReturnType<typeof softmaxSteps>;
    try {
      scores = parseVector(typed);
      steps = softmaxSteps(scores);
    } catch (err) {
      const code = err instanceof InputProblem ? err.code : "not_a_number";
      const box = el("div", "tl-error", fill(L("problem"), { name: L("scores"), why: L(`problem_${code}`) }));
      box.setAttribute("role", "alert");
      box.dataset.problem = code;
      out.replaceChildren(box);
      return;
    }
    const plain = plainNormalise(scores);
    const left = el("div", "tl-col");
    left.append(richText("p", "tl-text", L("softmax_head")),
                table([L("col_score"), L("col_exp"), L("col_softmax")], scores.map((s, j) => ({
                  cells: [num(s), pyFixed(steps.exps[j], 3), pyFixed(steps.weights[j], 3)],
                  values: [s === -Infinity ? null : s, steps.exps[j], steps.weights[j]],
                })), "sa-lab-softmax"),
                el("p", "tl-caption", steps.shift
                  ? fill(L("softmax_sum"), { total: pyFixed(steps.total, 3), shift: num(steps.shift) })
                  : fill(L("softmax_sum_plain"), { total: pyFixed(steps.total, 3) })));
    const right = el("div", "tl-col");
    right.append(richText("p", "tl-text", L("plain_head")));
    if (plain.weights === null) {
      const box = el("div", "tl-error", L(`plain_${plain.problem}`));
      box.dataset.problem = String(plain.problem);
      right.append(box);
    } else {
      const w = plain.weights;
      right.append(table([L("col_score"), L("col_plain")], scores.map((s, j) => ({
        cells: [num(s), pyFixed(w[j], 3)], values: [s, w[j]],
      })), "sa-lab-plain"), el("p", "tl-caption", fill(L("plain_sum"), { total: num(plain.total) })));
      if (plain.problem === "negative") right.append(el("div", "tl-warning", L("plain_negative")));
    }
    const cols = el("div", "tl-columns");
    cols.append(left, right);
    const chart = groupedBars({
      categories: scores.map((s, j) => `x${sub(j)} = ${num(s)}`),
      groups: [{ label: L("col_softmax"), values: steps.weights },
               { label: L("col_plain"), values: plain.weights ?? scores.map(() => null) }],
      title: L("chart"), xTitle: L("col_score"), yTitle: L("axis_weight"), legendTitle: L("method"),
      format: (v) => pyFixed(v, 3), testid: "sa-lab-chart",
    }, tip, root.classList.contains("dark"));
    out.replaceChildren(cols, chart);
  };
}

// --- multi-head against one big head ------------------------------------------------------

function heads(data: MhData, L: (k: string) => string, controls: HTMLElement, out: HTMLElement, tip: Tooltip): () => void {
  const knobs = () => {
    const v = bus.values(PAGE);
    const fallback = data.counts[Math.min(1, data.counts.length - 1)];
    const h = data.counts.includes(v.sa_mh_heads as number) ? (v.sa_mh_heads as number) : fallback;
    return { h, scale: typeof v.sa_mh_scale === "boolean" ? v.sa_mh_scale : true, causal: v.sa_mh_mask === true };
  };
  const k0 = knobs();
  controls.append(
    select({ knob: "sa_mh_heads", label: L("heads"), options: data.counts, value: k0.h, format: String,
             onChange: (v) => bus.set(PAGE, { sa_mh_heads: v }) }),
    toggle({ knob: "sa_mh_scale", label: L("scale"), value: k0.scale, onChange: (v) => bus.set(PAGE, { sa_mh_scale: v }) }),
    toggle({ knob: "sa_mh_mask", label: L("mask"), value: k0.causal, onChange: (v) => bus.set(PAGE, { sa_mh_mask: v }) }),
  );
  const tokens = data.tokens;
  const d = data.x[0].length;
  const dims = (lo: number, count: number) => Array.from({ length: count }, (_, c) => String(lo + c + 1));
  const matrix = (m: number[][], testid: string, title: string, rows: string[], cols: string[], xTitle: string,
                  yTitle: string, format: (v: number) => string, weights: boolean, cell: number) => {
    const [lo, hi] = rangeOf(m);
    return heatmap({
      values: m.flat(), rows: m.length, cols: m[0].length, rowLabels: rows, colLabels: cols, title, xTitle, yTitle,
      valueTitle: weights ? L("axis_weight") : L("axis_value"),
      scale: weights ? { symmetric: false, low: lo, high: hi } : { symmetric: true, low: 0, high: boundOf(m) },
      format, tipFormat: exact, showNumbers: true, cell, testid, tableLabel: L("numbers"),
    }, tip);
  };
  return () => {
    const { h, scale, causal } = knobs();
    const r = multiHead(data.x, h, data.w_o, scale, causal);
    const parts: HTMLElement[] = [];
    parts.push(matrix(data.x, "sa-mh-x", L("x"), tokens, dims(0, d), L("axis_dim"), L("axis_token"), cellG, false, 40));
    parts.push(richText("p", "tl-text", fill(L("split"), { h, d, d_head: r.dHead })));
    const grid = el("div", "tl-columns");
    for (let head = 0; head < h; head++) {
      const col = el("div", "tl-col");
      col.append(
        matrix(r.q[head], `sa-mh-slice-${head + 1}`, fill(L("slice"), { h: head + 1 }), tokens, dims(head * r.dHead, r.dHead),
               L("axis_dim"), L("axis_token"), cellG, false, 36),
        matrix(r.weights[head], `sa-mh-head-${head + 1}`, fill(L("head_weights"), { h: head + 1 }), tokens, tokens,
               L("axis_key"), L("axis_query"), cell3, true, 48),
      );
      grid.append(col);
    }
    parts.push(grid, el("p", "tl-caption", fill(L("seeds_note"), data.words)));
    parts.push(richText("p", "tl-text", fill(L("big_head"), { d })));
    parts.push(matrix(r.single, "sa-mh-big", fill(L("big_weights"), { d }), tokens, tokens, L("axis_key"), L("axis_query"),
                      cell3, true, 48));
    const argmax = (row: number[]) => row.reduce((best, v, j) => (v > row[best] ? j : best), 0);
    const list = el("ul", "tl-text sa-mh-compare");
    tokens.forEach((token, i) => {
      const perHead = r.weights.map((w, head) => fill(L("favourite"), {
        h: head + 1, token: tokens[argmax(w[i])], pct: pyFixed(100 * Math.max(...w[i]), 0) })).join(L("sep"));
      const line = fill(L("compare_line"), { token, heads: perHead, big: tokens[argmax(r.single[i])],
                                             pct: pyFixed(100 * Math.max(...r.single[i]), 0) });
      const item = el("li");
      item.append(richText("span", "", line.replace(/^- /, "")));
      list.append(item);
    });
    parts.push(list, richText("p", "tl-text", L("concat")));
    parts.push(el("div", "tl-formula", "MultiHead(X) = Concat(head₁, …, headₕ) W_O"));
    const three = el("div", "tl-columns");
    const c1 = el("div", "tl-col"), c2 = el("div", "tl-col"), c3 = el("div", "tl-col");
    c1.append(matrix(r.concat, "sa-mh-concat", L("concat_chart"), tokens, dims(0, d), L("axis_dim"), L("axis_token"),
                     (v) => pyFixed(v, 2), false, 40));
    c2.append(matrix(data.w_o, "sa-mh-wo", L("w_o"), dims(0, d), dims(0, d), L("axis_out_dim"), L("axis_in_dim"), cellG, false, 34));
    c3.append(matrix(r.output, "sa-mh-output", L("output"), tokens, dims(0, d), L("axis_dim"), L("axis_token"),
                     (v) => pyFixed(v, 2), false, 40));
    three.append(c1, c2, c3);
    parts.push(three, el("p", "tl-caption", L("w_o_note")));
    out.replaceChildren(...parts);
  };
}
