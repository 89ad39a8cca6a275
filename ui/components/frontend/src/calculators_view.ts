// The two arithmetic calculators, answered in the browser with zero websocket messages: the Whole
// model page's parameter counter (views "params" and "share": the count, its table and chart, and
// one layer's parts) and the Generation page's KV-cache memory (view "kv"). Python sends the
// presets, the knobs (their durable values, checked) and every word, once; the math is
// calculators/*.ts (≡ core/lessons/param_count.py and kv_memory.py, exact BigInt integers; the
// Node test compares them on random cases). A preset fills the inputs with its own values, which
// are then the inputs' defaults (a default stays out of the link, so a link carries the preset
// and the numbers a student changed, as ui.state's declarations read them back).

import * as bus from "./lessons/bus";
import { Tooltip } from "./lessons/charts";
import { integerBox, select, toggle } from "./lessons/controls";
import { el, richText } from "./lessons/dom";
import { fill } from "./lessons/format";
import { LessonComponent, mountLesson } from "./lessons/mount";
import { commas, wholeIn } from "./calculators/exact";
import { horizontalBars, logLogLines, stackedBar } from "./calculators/charts";
import { kvShown, paramsShown } from "./calculators/display";
import { DTYPE_BITS } from "./calculators/kv_memory";
import { ArchSpec, FFNS, NORMS, POSITIONAL, problem, Problem, sameSpec } from "./calculators/param_count";

type L = (k: string) => string;

// --- shared: knob specs whose defaults follow the preset -----------------------------------

// One spec object per knob name, shared by every view of a page: the bus saves through it, so
// changing its `default` (a new preset) changes what stays out of the link.
const registry = new Map<string, bus.LessonKnob>();

function canonical(knobs: bus.LessonKnob[]): bus.LessonKnob[] {
  return knobs.map((k) => {
    const known = registry.get(k.name);
    if (known) { known.value = k.value; known.kind = k.kind; return known; }
    const copy = { ...k };
    registry.set(k.name, copy);
    return copy;
  });
}

const encode = (v: unknown): number | string => (typeof v === "boolean" ? (v ? 1 : 0) : (v as number | string));

/** Make `base` the defaults of `fields` (values unchanged) and save them again, so the address bar
 *  drops exactly the values equal to the preset's. */
function followDefaults(page: string, prefix: string, fields: readonly string[], base: Record<string, unknown>): void {
  let moved = false;
  for (const f of fields) {
    const spec = registry.get(prefix + f);
    if (spec && spec.default !== encode(base[f])) { spec.default = encode(base[f]); moved = true; }
  }
  if (!moved) return;
  const values = bus.values(page);
  bus.set(page, Object.fromEntries(fields.map((f) => [prefix + f, values[prefix + f]])));
}

function inputOf(wrap: HTMLElement): HTMLInputElement | HTMLSelectElement {
  return wrap.querySelector("input, select") as HTMLInputElement | HTMLSelectElement;
}

function metric(label: string, value: string, testid: string, exact?: string, note?: string): HTMLElement {
  const box = el("div", "tl-metric cal-metric");
  box.dataset.testid = testid;
  box.append(el("div", "tl-metric-label", label), el("div", "tl-metric-value", value));
  if (exact !== undefined) box.dataset.value = exact;
  if (note) box.append(el("div", "tl-caption", note));
  return box;
}

function table(header: string[], rows: string[][], testid: string): HTMLElement {
  const t = el("table", "tl-table cal-table");
  const head = el("tr");
  for (const h of header) head.append(el("th", "", h));
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  for (const r of rows) {
    const tr = el("tr");
    r.forEach((c, i) => tr.append(el("td", i === 0 ? "cal-first" : "", c)));
    tbody.append(tr);
  }
  t.append(thead, tbody);
  const wrap = el("div", "tl-table-wrap");
  wrap.dataset.testid = testid;
  wrap.append(t);
  return wrap;
}

// --- the parameter counter (Whole model) ------------------------------------------------------

const WM = "whole_model";
const WHOLE_FIELDS = ["vocab", "d_model", "n_layer", "n_ctx", "n_head", "n_kv_head", "d_ff", "n_experts", "n_active"] as const;
const SPEC_FIELDS = [...WHOLE_FIELDS, "positional", "norm", "ffn", "tied", "bias"] as const;
const KIND_OPTIONS: Record<string, readonly string[]> = { positional: POSITIONAL, norm: NORMS, ffn: FFNS };

interface ArchPreset { key: string; name: string; source: string | null; published: string | null; spec: ArchSpec }
interface ParamsData {
  view: "params" | "share";
  knobs: bus.LessonKnob[];
  presets: ArchPreset[]; // "ours" first
  ours: { key: string; numel: string };
  limits: Record<string, number>; // each whole field's highest value (lowest: 1)
  kinds: Record<string, Record<string, string>>; // positional / norm / ffn: value -> its name
  colours: Record<string, string>; // component -> colour
  labels: Record<string, string>;
  presenter?: boolean;
}

function presetOf(data: ParamsData, key: unknown): ArchPreset {
  return data.presets.find((p) => p.key === key) ?? data.presets[0];
}

/** The spec the inputs hold now: each value checked again (a link or a stale tab may hold anything). */
function currentSpec(data: ParamsData): { preset: ArchPreset; spec: ArchSpec } {
  const v = bus.values(WM);
  const preset = presetOf(data, v.wm_preset);
  const spec = { ...preset.spec };
  for (const f of WHOLE_FIELDS) {
    const x = v[`wm_${f}`];
    if (wholeIn(x, 1, data.limits[f])) spec[f] = x;
  }
  for (const f of ["positional", "norm", "ffn"] as const) {
    const x = v[`wm_${f}`];
    if (typeof x === "string" && KIND_OPTIONS[f].includes(x)) spec[f] = x;
  }
  for (const f of ["tied", "bias"] as const) if (typeof v[`wm_${f}`] === "boolean") spec[f] = v[`wm_${f}`] as boolean;
  return { preset, spec };
}

function problemText(p: Problem, L: L): string {
  const field = (f: string) => L(`field_${f}`);
  switch (p.code) {
    case "positive": return fill(L("problem_positive"), { field: field(p.field) });
    case "d_model_heads": return fill(L("problem_d_model_heads"), { d: commas(p.d_model), h: commas(p.n_head) });
    case "heads_kv": return fill(L("problem_heads_kv"), { h: commas(p.n_head), kv: commas(p.n_kv_head) });
    case "active_experts": return fill(L("problem_active_experts"), { active: commas(p.n_active), experts: commas(p.n_experts) });
    default: return fill(L("problem_kind"), { field: field(p.field) });
  }
}

function paramsControls(data: ParamsData, L: L, controls: HTMLElement): () => void {
  const set = (changes: Record<string, unknown>) => bus.set(WM, changes);
  const { preset, spec } = currentSpec(data);
  const source = el("p", "tl-caption cal-source");
  const boxes = new Map<string, HTMLElement>();
  const whole = (f: (typeof WHOLE_FIELDS)[number]) => {
    const high = data.limits[f];
    const box = integerBox({ knob: `wm_${f}`, label: L(`field_${f}`), min: 1, max: high, value: spec[f],
                             invalid: fill(L("invalid_box"), { min: 1, max: commas(high) }),
                             onInput: (v) => set({ [`wm_${f}`]: v }) });
    boxes.set(f, box);
    return box;
  };
  const kind = (f: "positional" | "norm" | "ffn") => {
    const box = select({ knob: `wm_${f}`, label: L(`field_${f}`), options: [...KIND_OPTIONS[f]], value: spec[f],
                         format: (v) => data.kinds[f]?.[v] ?? v, onChange: (v) => set({ [`wm_${f}`]: v }) });
    boxes.set(f, box);
    return box;
  };
  const flag = (f: "tied" | "bias") => {
    const box = toggle({ knob: `wm_${f}`, label: L(`field_${f}`), value: spec[f], onChange: (v) => set({ [`wm_${f}`]: v }) });
    boxes.set(f, box);
    return box;
  };
  const showSource = (p: ArchPreset) => {
    source.textContent = p.source ? fill(L("source"), { source: p.source }) : "";
    source.hidden = !p.source;
  };
  const presetBox = select({
    knob: "wm_preset", label: L("preset"), options: data.presets.map((p) => p.key), value: preset.key,
    format: (k) => presetOf(data, k).name,
    onChange: (k) => { // a new preset starts its inputs from its own values
      const p = presetOf(data, k);
      showSource(p);
      followDefaults(WM, "wm_", SPEC_FIELDS, p.spec as unknown as Record<string, unknown>);
      for (const f of SPEC_FIELDS) {
        const input = inputOf(boxes.get(f)!);
        const v = p.spec[f];
        if (input instanceof HTMLInputElement && input.type === "checkbox") input.checked = v as boolean;
        else if (input instanceof HTMLSelectElement) input.value = String(KIND_OPTIONS[f].indexOf(v as string));
        else { input.value = String(v); input.setAttribute("aria-invalid", "false"); boxes.get(f)!.querySelector(".tl-invalid")!.textContent = ""; }
      }
      set({ wm_preset: k, ...Object.fromEntries(SPEC_FIELDS.map((f) => [`wm_${f}`, p.spec[f]])) });
    },
  });
  presetBox.classList.add("cal-preset");
  showSource(preset);
  const edit = el("details", "cal-edit");
  edit.append(el("summary", "", L("edit")));
  const grid = el("div", "cal-grid");
  grid.append(whole("vocab"), whole("d_model"), whole("n_layer"), whole("n_ctx"), whole("n_head"), whole("n_kv_head"),
              whole("d_ff"), kind("positional"), kind("norm"), kind("ffn"), flag("tied"), flag("bias"),
              whole("n_experts"), whole("n_active"));
  edit.append(grid);
  controls.append(presetBox, source, edit);
  // The preset the browser restored may differ from the server's: its values are the defaults.
  return () => followDefaults(WM, "wm_", SPEC_FIELDS, currentSpec(data).preset.spec as unknown as Record<string, unknown>);
}

function paramsView(data: ParamsData, L: L, out: HTMLElement, tip: Tooltip, root: HTMLElement): void {
  const { preset, spec } = currentSpec(data);
  const bad = problem(spec);
  root.dataset.spec = JSON.stringify(spec);
  if (bad) {
    const warn = el("div", "tl-warning", fill(L("invalid"), { detail: problemText(bad, L) }));
    warn.setAttribute("role", "alert");
    warn.dataset.testid = "wm-invalid";
    out.replaceChildren(warn);
    root.dataset.total = "";
    return;
  }
  const shown = paramsShown(spec);
  root.dataset.total = shown.count.total.toString();
  const metrics = el("div", "cal-metrics");
  metrics.append(metric(L("total"), shown.total, "wm-total", shown.count.total.toString()),
                 metric(L("active"), shown.active, "wm-active", shown.count.active.toString()),
                 metric(L("ffn_share"), shown.ffnShare, "wm-ffn-share"));
  const parts: Node[] = [metrics];
  if (preset.key === data.ours.key && sameSpec(spec, preset.spec)) {
    parts.push(note(fill(L("matches"), { numel: commas(BigInt(data.ours.numel)), ok: shown.count.total === BigInt(data.ours.numel) ? "✓" : "✗" })));
  } else if (preset.key !== data.ours.key && sameSpec(spec, preset.spec) && preset.published !== null) {
    parts.push(note(fill(L("published"), { n: commas(BigInt(preset.published)), ok: shown.count.total === BigInt(preset.published) ? "✓" : "✗" })));
  }
  parts.push(table([L("col_part"), L("col_formula"), L("col_count"), L("col_share")],
                   shown.rows.map((r) => [L(`part_${r.part}`), L(`formula_${r.part}`), r.count, r.share]), "wm-count-table"));
  parts.push(stackedBar({
    parts: shown.rows.map((r) => ({ label: L(`part_${r.part}`), value: r.value, colour: data.colours[r.part],
                                   say: `${L(`part_${r.part}`)}: ${r.count} (${r.share})` })),
    title: fill(L("chart_title"), { total: shown.total }), xTitle: L("axis_params"), barLabel: L("axis_model"),
    legendTitle: L("axis_part"), testid: "wm-share-chart",
  }, tip));
  out.replaceChildren(...parts);
}

function note(text: string): HTMLElement {
  const box = el("div", "tl-info cal-success", text);
  box.dataset.testid = "wm-check";
  return box;
}

function shareView(data: ParamsData, L: L, out: HTMLElement, tip: Tooltip): void {
  const { spec } = currentSpec(data);
  if (problem(spec)) { out.replaceChildren(); return; }
  const shown = paramsShown(spec);
  out.replaceChildren(
    richText("p", "tl-text cal-share-text", fill(L("share_explain"), shown.layer)),
    stackedBar({
      parts: shown.layerParts.map((p) => ({ label: L(`part_${p.part}`), value: p.value, colour: data.colours[p.part],
                                           say: `${L(`part_${p.part}`)}: ${p.count}` })),
      title: fill(L("share_chart_title"), { total: shown.layer.layer }), xTitle: L("axis_params"),
      barLabel: L("axis_one_layer"), legendTitle: L("axis_part"), testid: "wm-layer-chart",
    }, tip),
  );
}

// --- the KV-cache memory (Generation) ----------------------------------------------------------

const GEN = "generation";
const KV_FIELDS = ["layers", "heads", "kv_heads", "head_dim", "tokens"] as const; // follow the preset
type KvField = (typeof KV_FIELDS)[number] | "batch";

interface KvPreset { key: string; name: string; layers: number; heads: number; kv_heads: number; head_dim: number; tokens: number }
interface KvData {
  view: "kv";
  knobs: bus.LessonKnob[];
  presets: KvPreset[];
  limits: Record<KvField, number>;
  steps: Partial<Record<KvField, number>>; // the arrow keys' step (1000 tokens)
  colours: string[]; // MHA, GQA, MQA
  labels: Record<string, string>;
  presenter?: boolean;
}

function kvPreset(data: KvData, key: unknown): KvPreset {
  return data.presets.find((p) => p.key === key) ?? data.presets[0];
}

function kvInputs(data: KvData): { preset: KvPreset; n: Record<KvField, number>; dtype: string } {
  const v = bus.values(GEN);
  const preset = kvPreset(data, v.generation_kv_preset);
  const n = { ...preset, batch: 1 } as unknown as Record<KvField, number>;
  for (const f of [...KV_FIELDS, "batch"] as KvField[]) {
    const x = v[`generation_kv_${f}`];
    if (wholeIn(x, 1, data.limits[f])) n[f] = x;
  }
  const dtype = typeof v.generation_kv_dtype === "string" && v.generation_kv_dtype in DTYPE_BITS ? v.generation_kv_dtype : "fp16";
  return { preset, n, dtype };
}

function kvControls(data: KvData, L: L, controls: HTMLElement): () => void {
  const set = (changes: Record<string, unknown>) => bus.set(GEN, changes);
  const { preset, n, dtype } = kvInputs(data);
  const boxes = new Map<string, HTMLElement>();
  const LABEL: Record<KvField, string> = { layers: "layers", heads: "q_heads", kv_heads: "kv_heads", head_dim: "head_dim",
                                           tokens: "tokens", batch: "batch" };
  const whole = (f: KvField) => {
    const high = data.limits[f];
    const box = integerBox({ knob: `generation_kv_${f}`, label: L(LABEL[f]), min: 1, max: high, value: n[f],
                             invalid: fill(L("invalid_box"), { min: 1, max: commas(high) }),
                             onInput: (v) => set({ [`generation_kv_${f}`]: v }) });
    const step = data.steps[f];
    if (step) {
      // An arrow key moves by `step` from round numbers (10,000 -> 11,000): the browser's step grid
      // starts at `min` when there is one, so the range is checked here alone (integerBox does).
      inputOf(box).setAttribute("step", String(step));
      inputOf(box).removeAttribute("min");
    }
    boxes.set(f, box);
    return box;
  };
  const presetBox = select({
    knob: "generation_kv_preset", label: L("preset"), options: data.presets.map((p) => p.key), value: preset.key,
    format: (k) => kvPreset(data, k).name,
    onChange: (k) => {
      const p = kvPreset(data, k);
      followDefaults(GEN, "generation_kv_", KV_FIELDS, p as unknown as Record<string, unknown>);
      for (const f of KV_FIELDS) {
        const box = boxes.get(f)!;
        inputOf(box).value = String(p[f]);
        inputOf(box).setAttribute("aria-invalid", "false");
        box.querySelector(".tl-invalid")!.textContent = "";
      }
      set({ generation_kv_preset: k, ...Object.fromEntries(KV_FIELDS.map((f) => [`generation_kv_${f}`, p[f]])) });
    },
  });
  presetBox.classList.add("cal-preset");
  const dtypes = Object.keys(DTYPE_BITS);
  const dtypeBox = select({ knob: "generation_kv_dtype", label: L("dtype"), options: dtypes, value: dtype,
                            format: (d) => fill(L("dtype_option"), { dtype: d, bytes: String(DTYPE_BITS[d] / 8) }),
                            onChange: (d) => set({ generation_kv_dtype: d }) });
  const grid = el("div", "cal-grid");
  grid.append(whole("layers"), whole("heads"), whole("kv_heads"), whole("head_dim"), whole("tokens"), whole("batch"), dtypeBox);
  controls.append(presetBox, grid);
  return () => followDefaults(GEN, "generation_kv_", KV_FIELDS, kvInputs(data).preset as unknown as Record<string, unknown>);
}

function kvView(data: KvData, L: L, out: HTMLElement, tip: Tooltip, root: HTMLElement): void {
  const { n, dtype } = kvInputs(data);
  const s = kvShown({ n_layer: n.layers, n_head: n.heads, n_kv_head: n.kv_heads, d_head: n.head_dim, n_tokens: n.tokens,
                      batch: n.batch, dtype });
  root.dataset.inputs = JSON.stringify({ ...n, dtype });
  const metrics = el("div", "cal-metrics");
  metrics.append(metric(L("per_layer"), s.perLayer, "kv-per-layer", s.perLayerExact.replace(/,/g, ""), fill(L("exact"), { n: s.perLayerExact })),
                 metric(fill(L("total"), { n: n.layers }), s.total, "kv-total", s.totalExact.replace(/,/g, ""), fill(L("exact"), { n: s.totalExact })),
                 metric(L("per_token"), s.perToken, "kv-per-token", undefined, L("per_token_help")));
  const parts: Node[] = [metrics, richText("p", "tl-text cal-formula", fill(L("formula"), s.formula))];
  if (s.layout === null) {
    const warn = el("div", "tl-warning", fill(L("uneven"), { q: n.heads, kv: n.kv_heads }));
    warn.setAttribute("role", "status");
    warn.dataset.testid = "kv-uneven";
    parts.push(warn);
    out.replaceChildren(...parts);
    return;
  }
  parts.push(richText("p", "tl-caption cal-layout", fill(L("layout"), { kind: s.layout.kind, q: n.heads, kv: n.kv_heads, share: s.layout.share })));
  const kinds = s.variants.map((v) => `${v.kind} (${fill(L("kv_count"), { n: v.n_kv_head })})`);
  const colour = (i: number) => data.colours[i % data.colours.length];
  const bars = horizontalBars({
    bars: s.variants.map((v, i) => ({
      label: kinds[i], value: v.totalBytes / 1e9, shown: v.total, colour: colour(i),
      say: `${kinds[i]}: ${v.total} · ${fill(L("variant_detail"), { share: v.share, saving: v.saving })}`,
    })),
    title: fill(L("variants_title"), { tokens: commas(n.tokens) }), xTitle: L("axis_gb"), yTitle: L("axis_layout"),
    testid: "kv-variants-chart",
  }, tip);
  const DASHES = ["", "6 4", "2 3"];
  const growth = logLogLines({
    xs: s.contexts, title: L("growth_title"), xTitle: L("axis_context"), yTitle: L("axis_gb"), legendTitle: L("axis_layout"),
    series: s.growth.map((g, i) => ({ label: kinds[i], ys: g.bytes.map((b) => b / 1e9), shown: g.shown, colour: colour(i), dash: DASHES[i % 3] })),
    xShown: (x) => commas(x), testid: "kv-growth-chart",
  }, tip);
  const numbers = el("details", "tl-numbers");
  numbers.append(el("summary", "", L("numbers")),
                 table([L("axis_context"), ...kinds], s.contexts.map((c, j) => [commas(c), ...s.growth.map((g) => g.shown[j])]), "kv-growth-table"));
  const cols = el("div", "tl-columns");
  const left = el("div", "tl-col"), right = el("div", "tl-col");
  left.append(bars);
  right.append(growth, numbers, el("p", "tl-caption", L("growth_caption")));
  cols.append(left, right);
  parts.push(cols, table(
    [L("col_layout"), L("col_kv_heads"), L("col_share"), L("col_per_layer"), L("col_total"), L("col_saving")],
    s.variants.map((v) => [v.kind, String(v.n_kv_head), String(v.share), v.perLayer, v.total, `${v.saving}×`]), "kv-variants-table"));
  out.replaceChildren(...parts);
}

// --- mounting ------------------------------------------------------------------------------------

type Data = ParamsData | KvData;

// --- one consistent state per tab ----------------------------------------------------------------
//
// The knobs' shared state keeps each value on its own and takes the server's where the server's
// changed. Here the inputs belong together (a preset and its sizes): when this app's model changes,
// the server's values for "our model" change, and a browser that shows another preset must keep
// all of its own values, not a mix. So each page keeps one snapshot of its calculator in this tab;
// in the same loaded document (a page change, a rerun: no link was opened) the snapshot is the
// truth, and "our model" takes the new model's sizes when the model changed (as a new preset does).

const DOCUMENT = String(performance.timeOrigin);
interface Snapshot { d: string; sig: string; values: Record<string, unknown> }

function readSnapshot(page: string): Snapshot | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(`tj.calc.${page}`) ?? "null") as Snapshot | null;
    return s && s.d === DOCUMENT && typeof s.sig === "string" && typeof s.values === "object" ? s : null;
  } catch {
    return null; // storage blocked or a stale format: the knobs' own state still holds the values
  }
}

function writeSnapshot(page: string, sig: string, names: string[]): void {
  const values = bus.values(page);
  try {
    sessionStorage.setItem(`tj.calc.${page}`, JSON.stringify({ d: DOCUMENT, sig, values: Object.fromEntries(names.map((n) => [n, values[n]])) }));
  } catch { /* storage blocked: nothing to keep */ }
}

interface Shape { presetKnob: string; ours: string; sig: string; follows: string[]; base: Record<string, unknown> }

function shape(data: Data): Shape {
  if (data.view === "kv") {
    const live = data.presets[data.presets.length - 1];
    return { presetKnob: "generation_kv_preset", ours: live.key, sig: JSON.stringify(live),
             follows: KV_FIELDS.map((f) => `generation_kv_${f}`),
             base: Object.fromEntries(KV_FIELDS.map((f) => [`generation_kv_${f}`, live[f]])) };
  }
  const ours = data.presets[0];
  return { presetKnob: "wm_preset", ours: ours.key, sig: JSON.stringify(ours.spec) + data.ours.numel,
           follows: SPEC_FIELDS.map((f) => `wm_${f}`),
           base: Object.fromEntries(SPEC_FIELDS.map((f) => [`wm_${f}`, ours.spec[f]])) };
}

/** Take this tab's snapshot (if any, see above) as the page's values before anything is drawn. */
function restoreSnapshot(page: string, knobs: bus.LessonKnob[], sh: Shape): void {
  bus.adopt(page, knobs);
  const snap = readSnapshot(page);
  if (!snap) return;
  const values: Record<string, unknown> = {};
  for (const k of knobs) if (k.name in snap.values) values[k.name] = snap.values[k.name];
  if (values[sh.presetKnob] === sh.ours && snap.sig !== sh.sig) Object.assign(values, sh.base); // a new model
  const now = bus.values(page);
  if (Object.entries(values).some(([n, v]) => now[n] !== v)) bus.set(page, values);
}

const snapshotStops = new Map<string, () => void>(); // each mounted view's snapshot writer, by its key

export default function mount(component: LessonComponent<Data>): () => void {
  const data = component.data;
  const knobs = canonical(data.knobs);
  const page = data.view === "kv" ? GEN : WM;
  const sh = shape(data);
  restoreSnapshot(page, knobs, sh);
  const names = knobs.map((k) => k.name);
  writeSnapshot(page, sh.sig, names);
  snapshotStops.get(component.key)?.(); // a mount for new data: the old one stops writing
  const stopSnapshots = bus.listen(page, () => writeSnapshot(page, sh.sig, names));
  snapshotStops.set(component.key, stopSnapshots);
  let settle: () => void = () => {};
  const cleanup = mountLesson({ ...component, data: { ...data, knobs } as Data }, page, "cal",
    (d, L, controls, out, tip, root) => {
      root.classList.add("cal");
      if (d.view === "kv") {
        settle = kvControls(d, L, controls);
        const fields = ["preset", ...KV_FIELDS, "batch", "dtype"].map((f) => `generation_kv_${f}`);
        return { redraw: () => kvView(d, L, out, tip, root), follows: fields };
      }
      const fields = ["wm_preset", ...SPEC_FIELDS.map((f) => `wm_${f}`)];
      if (d.view === "params") {
        settle = paramsControls(d, L, controls);
        return { redraw: () => paramsView(d, L, out, tip, root), follows: fields };
      }
      controls.remove();
      return { redraw: () => shareView(d, L, out, tip), follows: fields };
    });
  settle();
  return () => { stopSnapshots(); snapshotStops.delete(component.key); cleanup(); };
}

