// Multi-head attention's head picker and enlarged head: a Streamlit components-v2 module.
// Python sends every head's pattern and scores for the prompt once (the model's trace:
// blocks.L.attn.hook_pattern / hook_attn_scores, the causal triangle k <= q only, float32);
// picking a head (a radio group over layers x heads: arrow keys, one Tab stop) redraws the
// heatmap, its legend, the head's behaviour scores and the head view of its layer (BertViz: one
// query token, every head; the query picked here too) with no message to the server.

import { el, fill, PALETTE, rich, svg, watchTheme } from "./dom";
import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";

interface Behaviour { label: string; score: string; scores: string[] } // translated, formatted in Python
interface Data {
  n_layer: number;
  n_head: number;
  labels: string[]; // "3·首都": position and visible token
  patterns: string; // base64 float32, per (layer, head): the lower triangle row by row
  scores: string;
  behaviours: Behaviour[]; // layer-major
  behaviour_names: string[];
  tokens: string[]; // visible tokens (display_token), for the head view
  // query scope: the prompt; scores / grid: the two switches (flags travel as 1 / 0)
  knobs: { layer: KnobSpec; head: KnobSpec; query: KnobSpec & { scope: string }; scores: KnobSpec; grid: KnobSpec };
  text: Record<string, string>;
  presenter: boolean;
}
interface Component {
  data: Data;
  key: string;
  parentElement: HTMLElement | ShadowRoot;
}

// d3's "blues" from 0.12 to 1 (ui.charts.vl.SEQUENTIAL_BLUES): weights 0..1
const BLUES = ["#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"];
// d3's "redblue", red for positive (ui.charts.attention._redblue): scores over +-max|score|
const REDBLUE = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"];
const MASKED = "#9e9e9e";

function hexRgb(hex: string): [number, number, number] {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}
export function ramp(stops: string[], t: number): string {
  const x = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const a = hexRgb(stops[i]), b = hexRgb(stops[i + 1]), f = x - i;
  const c = a.map((v, k) => Math.round(v + (b[k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** Base64 float32 (little-endian, numpy's) to numbers. */
export function decode(b64: string): Float32Array {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

/** The value at (query q, key k) of head (layer, head): NaN above the diagonal (masked). */
export function cellOf(values: Float32Array, n: number, nHead: number, layer: number, head: number, q: number, k: number): number {
  if (k > q) return NaN;
  const tri = (n * (n + 1)) / 2;
  return values[(layer * nHead + head) * tri + (q * (q + 1)) / 2 + k];
}

/** Vega's ".4f" and the −∞ of a masked score. */
export function shown(v: number): string {
  if (v === -Infinity) return "-inf";
  if (!isFinite(v)) return String(v);
  return v.toFixed(4);
}

/** A switch's value: 1 or 0 (else the server's value), recorded for the address bar. */
function flag(knob: KnobSpec, value: number): boolean {
  const v = value === 0 || value === 1 ? value : knob.value ? 1 : 0;
  saveKnob(knob, v);
  return v === 1;
}

/** An on/off switch (a checkbox with role switch: Space toggles it; one Tab stop), labelled. */
function switchBox(id: string, label: string, on: boolean, onChange: (on: boolean) => void, help?: string): HTMLElement {
  const wrap = el("div", "mh-switch");
  wrap.dataset.knob = id;
  const input = el("input");
  input.type = "checkbox";
  input.id = `mh-${id}`;
  input.setAttribute("role", "switch");
  input.checked = on;
  input.addEventListener("change", () => onChange(input.checked));
  const lab = el("label", "mh-switch-label", label);
  lab.htmlFor = input.id;
  wrap.append(input, lab);
  if (help) {
    const h = el("div", "mh-caption mh-switch-help", help);
    h.id = `mh-${id}-help`;
    input.setAttribute("aria-describedby", h.id);
    wrap.append(h);
  }
  return wrap;
}

let promptSeen = ""; // the prompt the head view's query was last shown for, in this document

/** A whole number in [0, high] (else the server's value), recorded for the address bar. */
function fitted(knob: KnobSpec, value: number, high: number): number {
  const v = Number.isInteger(value) && value >= 0 && value <= high ? value : Math.min(Math.max(0, knob.value), high);
  saveKnob(knob, v);
  return v;
}

export default function mount(component: Component): () => void {
  const { data, parentElement } = component;
  const T = (name: string) => data.text[name] ?? name;
  const n = data.labels.length;
  const patterns = decode(data.patterns);
  const scores = decode(data.scores);
  const K = data.knobs;
  let layer = fitted(K.layer, restoreKnob(K.layer), data.n_layer - 1);
  let head = fitted(K.head, restoreKnob(K.head), data.n_head - 1);
  // a new prompt starts the head view from the server's query (its last token)
  const restoredQuery = restoreKnob(K.query); // records the server's value as the one this browser saw
  let query = fitted(K.query, promptSeen === K.query.scope ? restoredQuery : K.query.value, n - 1);
  promptSeen = K.query.scope;
  // the switches: scores instead of weights (heatmap, legend, grid, tables); the grid of every head
  let showScores = flag(K.scores, restoreKnob(K.scores));
  let showGrid = flag(K.grid, restoreKnob(K.grid));

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("mh")) old.remove();
  const root = el("div", "mh");
  root.setAttribute("data-testid", "mha-heads");
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);

  // --- the picker: one radio group over layers x heads ------------------------------------
  const pickLabel = el("div", "mh-label", T("pick"));
  pickLabel.id = "mh-pick-label";
  const picker = el("div", "mh-picker");
  picker.setAttribute("role", "radiogroup");
  picker.setAttribute("aria-labelledby", pickLabel.id);
  picker.style.setProperty("--cols", String(data.n_head));
  const corner = el("span", "mh-axis", `${T("layer")} \\ ${T("head")}`);
  corner.setAttribute("aria-hidden", "true");
  picker.appendChild(corner);
  for (let h = 0; h < data.n_head; h++) {
    const th = el("span", "mh-axis", `H${h}`);
    th.setAttribute("aria-hidden", "true");
    picker.appendChild(th);
  }
  const radios: HTMLButtonElement[] = [];
  for (let l = 0; l < data.n_layer; l++) {
    const rowHead = el("span", "mh-axis", `L${l}`);
    rowHead.setAttribute("aria-hidden", "true");
    picker.appendChild(rowHead);
    for (let h = 0; h < data.n_head; h++) {
      const b = data.behaviours[l * data.n_head + h];
      const r = el("button", "mh-radio");
      r.type = "button";
      r.setAttribute("role", "radio");
      r.dataset.layer = String(l);
      r.dataset.head = String(h);
      r.setAttribute("aria-label", `${fill(T("layer_name"), { layer: l })}, ${fill(T("head_name"), { head: h })}: ${b.label}`);
      r.append(el("span", "mh-radio-name", `L${l} H${h}`), el("span", "mh-radio-kind", b.label));
      r.addEventListener("click", () => pick(l, h, false));
      radios.push(r);
      picker.appendChild(r);
    }
  }
  picker.addEventListener("keydown", (e) => {
    const moves: Record<string, [number, number]> = {
      ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0],
    };
    let l = layer, h = head;
    if (e.key in moves) {
      const [dl, dh] = moves[e.key];
      // wrap along the row, then to the next/previous layer (as a one-dimensional radio group does)
      const flat = (l * data.n_head + h + dl * data.n_head + dh + radios.length) % radios.length;
      l = Math.floor(flat / data.n_head);
      h = flat % data.n_head;
    } else if (e.key === "Home") { l = 0; h = 0; }
    else if (e.key === "End") { l = data.n_layer - 1; h = data.n_head - 1; }
    else return;
    e.preventDefault();
    pick(l, h, true);
  });

  const top = el("div", "mh-top");
  const pickBox = el("div", "mh-pick-box");
  const scoresSwitch = switchBox("scores", T("scores_switch"), showScores, (on) => {
    showScores = on;
    saveKnob(K.scores, on ? 1 : 0);
    draw();
  }, T("scores_help"));
  pickBox.append(pickLabel, picker, scoresSwitch);
  const side = el("div", "mh-side");
  top.append(pickBox, side);

  const title = el("div", "mh-title");
  const legend = el("div", "mh-legend");
  const stage = el("div", "mh-stage");
  const canvas = el("canvas", "mh-canvas");
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  const tip = el("div", "mh-tip mh-heat-tip");
  tip.hidden = true;
  tip.setAttribute("role", "status");
  stage.append(canvas, tip);
  const caption = el("p", "mh-caption");
  const tableBox = el("details", "mh-numbers");
  root.append(top, title, legend, stage, caption, tableBox);

  // --- every head at once (the grid): one canvas, each panel named and labelled with its behaviour
  const gridBox = el("section", "mh-grid");
  const gridHeading = el("div", "mh-subheader", T("grid_title"));
  const gridSwitch = switchBox("grid", T("grid_show"), showGrid, (on) => {
    showGrid = on;
    saveKnob(K.grid, on ? 1 : 0);
    drawGrid();
  });
  const gridBody = el("div", "mh-grid-body");
  const gridTitle = el("div", "mh-title");
  const gridLegend = el("div", "mh-legend");
  const gridStage = el("div", "mh-stage");
  const gridCanvas = el("canvas", "mh-canvas mh-grid-canvas");
  gridCanvas.setAttribute("role", "img");
  const gridTip = el("div", "mh-tip mh-grid-tip");
  gridTip.hidden = true;
  gridTip.setAttribute("role", "status");
  gridStage.append(gridCanvas, gridTip);
  const gridTable = el("details", "mh-behaviours");
  gridTable.append(el("summary", "", T("grid_table")));
  gridTable.append(behaviourTable(), el("p", "mh-caption", T("rules")));
  gridBody.append(gridTitle, gridLegend, gridStage, el("p", "mh-caption", T("grid_caption")),
    el("p", "mh-caption", T("grid_hover")), gridTable);
  gridBox.append(gridHeading, gridSwitch, gridBody);
  root.appendChild(gridBox);

  function behaviourTable(): HTMLElement {
    const wrap = el("div", "mh-numbers-wrap");
    wrap.tabIndex = 0;
    const tbl = el("table", "mh-table");
    const hr = tbl.createTHead().insertRow();
    for (const h of [T("layer"), T("head"), T("behaviour_col"), ...data.behaviour_names]) {
      const th = el("th", "", h);
      th.scope = "col";
      hr.appendChild(th);
    }
    const body = tbl.createTBody();
    data.behaviours.forEach((b, i) => {
      const tr = body.insertRow();
      for (const text of [String(Math.floor(i / data.n_head)), String(i % data.n_head), b.label, ...b.scores]) tr.insertCell().textContent = text;
    });
    wrap.appendChild(tbl);
    return wrap;
  }

  // --- the head view (BertViz): one query token, every head of the picked layer -------------
  const viewBox = el("section", "mh-view");
  const viewHeading = el("div", "mh-subheader", T("view_title"));
  const querySelect = el("select", "mh-query");
  querySelect.setAttribute("aria-label", T("view_query"));
  data.tokens.forEach((tok, i) => querySelect.appendChild(new Option(`${i} · ${tok}`, String(i))));
  querySelect.addEventListener("change", () => {
    const picked = Number(querySelect.value);
    if (Number.isInteger(picked) && picked >= 0 && picked < n) query = picked;
    saveKnob(K.query, query);
    drawView();
  });
  const queryLabel = el("label", "mh-query-label");
  queryLabel.append(el("span", "", T("view_query")), querySelect);
  const viewTitle = el("div", "mh-title");
  const panels = el("div", "mh-panels");
  const viewTip = el("div", "mh-tip mh-view-tip");
  viewTip.hidden = true;
  viewTip.setAttribute("role", "status");
  const viewCaption = el("p", "mh-caption", T("view_caption"));
  const panelsWrap = el("div", "mh-panels-wrap");
  panelsWrap.append(panels, viewTip);
  viewBox.append(viewHeading, queryLabel, viewTitle, panelsWrap, viewCaption);
  root.appendChild(viewBox);

  function pick(l: number, h: number, focus: boolean): void {
    layer = l;
    head = h;
    saveKnob(K.layer, l);
    saveKnob(K.head, h);
    draw();
    if (focus) radios[l * data.n_head + h].focus();
  }

  const values = () => (showScores ? scores : patterns);
  const at = (q: number, k: number) => cellOf(values(), n, data.n_head, layer, head, q, k);
  const bound = () => {
    let m = 0;
    for (let q = 0; q < n; q++) for (let k = 0; k <= q; k++) { const v = at(q, k); if (isFinite(v)) m = Math.max(m, Math.abs(v)); }
    return m || 1;
  };
  const colourOf = (v: number, scale: number) => {
    if (!isFinite(v)) return MASKED;
    return showScores ? ramp(REDBLUE, (v / scale + 1) / 2) : ramp(BLUES, v);
  };

  // --- the heatmap on a canvas (a long prompt's 128 x 128 cells draw in a few ms) -----------
  const font = () => getComputedStyle(root).getPropertyValue("--st-font").trim() || "\"Source Sans Pro\", sans-serif";
  const fg = () => getComputedStyle(root).getPropertyValue("--st-text-color").trim() || "#31333f";
  let geo = { cell: 20, left: 80, topPad: 8, bottom: 80 };
  let cursor: [number, number] | null = null; // keyboard cell (query, key)

  function drawHeatmap(): void {
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    const small = data.presenter ? 15 : n <= 24 ? 12 : 9;
    const mid = data.presenter ? 17 : 13;
    ctx.font = `${small}px ${font()}`;
    const longest = Math.max(...data.labels.map((s) => ctx.measureText(s).width), 10);
    const avail = Math.max(200, Math.min(stage.clientWidth || 600, 900));
    const labelW = Math.min(140, longest) + 8;
    const cell = Math.max(3, Math.min(36, Math.floor((avail - labelW - mid - 16) / n)));
    geo = { cell, left: labelW + mid + 10, topPad: 8, bottom: Math.min(140, longest) * 0.87 + mid + 18 };
    const w = geo.left + cell * n + 10, h = geo.topPad + cell * n + geo.bottom;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const scale = bound();
    for (let q = 0; q < n; q++) {
      for (let k = 0; k < n; k++) {
        ctx.fillStyle = colourOf(at(q, k), scale);
        ctx.fillRect(geo.left + k * cell, geo.topPad + q * cell, cell - (cell > 6 ? 1 : 0), cell - (cell > 6 ? 1 : 0));
      }
    }
    if (cursor) {
      ctx.strokeStyle = fg();
      ctx.lineWidth = 2;
      ctx.strokeRect(geo.left + cursor[1] * cell, geo.topPad + cursor[0] * cell, cell - 1, cell - 1);
    }
    // token labels: every one while they fit, else every k-th
    const every = Math.max(1, Math.ceil((small + 2) / cell));
    ctx.fillStyle = fg();
    ctx.font = `${small}px ${font()}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (let q = 0; q < n; q += every) ctx.fillText(clip(ctx, data.labels[q], 140), geo.left - 4, geo.topPad + (q + 0.5) * cell);
    for (let k = 0; k < n; k += every) {
      ctx.save();
      ctx.translate(geo.left + (k + 0.5) * cell, geo.topPad + n * cell + 4);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(clip(ctx, data.labels[k], 140), 0, 0);
      ctx.restore();
    }
    ctx.font = `600 ${mid}px ${font()}`;
    ctx.textAlign = "center";
    ctx.fillText(T("key"), geo.left + (n * cell) / 2, h - mid / 2 - 2);
    ctx.save();
    ctx.translate(mid / 2 + 2, geo.topPad + (n * cell) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(T("query"), 0, 0);
    ctx.restore();
  }

  function drawLegend(): void {
    const scale = bound();
    const bar = el("span", "mh-legend-bar");
    const stops = showScores ? REDBLUE : BLUES;
    bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
    const lo = showScores ? (-scale).toFixed(2) : "0";
    const hi = showScores ? scale.toFixed(2) : "1";
    const masked = el("span", "mh-legend-masked");
    masked.style.background = MASKED;
    legend.replaceChildren(el("span", "mh-legend-title", kind()), el("span", "", lo), bar, el("span", "", hi),
      masked, el("span", "", T("masked")));
  }

  const kind = () => T(showScores ? "kind_scores" : "kind_weights");

  function drawSide(): void {
    const b = data.behaviours[layer * data.n_head + head];
    const this_ = el("p");
    this_.appendChild(rich(T("behaviour_this"), { label: b.label }));
    const tbl = el("table", "mh-table");
    const hr = tbl.createTHead().insertRow();
    for (const h of [T("behaviour_col"), T("behaviour_score")]) { const th = el("th", "", h); th.scope = "col"; hr.appendChild(th); }
    const body = tbl.createTBody();
    data.behaviour_names.forEach((name, i) => {
      const tr = body.insertRow();
      tr.insertCell().textContent = name;
      tr.insertCell().textContent = b.scores[i] ?? "";
    });
    side.replaceChildren(this_, tbl, el("p", "mh-caption", T("behaviour_help")));
  }

  function drawNumbers(): void {
    // the chart's numbers as a table on demand (screen readers, and anyone who wants them)
    const summary = el("summary", "", T("numbers"));
    const wrap = el("div", "mh-numbers-wrap");
    wrap.tabIndex = 0;
    const open = tableBox.open;
    if (open) {
      const tbl = el("table", "mh-table");
      const hr = tbl.createTHead().insertRow();
      const c0 = el("th", "", `${T("query")} \\ ${T("key")}`);
      hr.appendChild(c0);
      for (const l of data.labels) { const th = el("th", "", l); th.scope = "col"; hr.appendChild(th); }
      const body = tbl.createTBody();
      for (let q = 0; q < n; q++) {
        const tr = body.insertRow();
        const th = el("th", "", data.labels[q]);
        th.scope = "row";
        tr.appendChild(th);
        for (let k = 0; k < n; k++) tr.insertCell().textContent = k > q ? (showScores ? "-inf" : T("masked")) : shown(at(q, k));
      }
      wrap.appendChild(tbl);
    }
    tableBox.replaceChildren(summary, wrap);
  }
  tableBox.addEventListener("toggle", drawNumbers);

  function drawView(): void {
    querySelect.value = String(query);
    viewTitle.textContent = fill(T("view_chart"), { layer, token: data.tokens[query] ?? "" });
    const rowH = data.presenter ? 24 : 19;
    const font = data.presenter ? 15 : 12;
    const colW = 92, gap = 70, H = n * rowH + 28;
    const W = 2 * colW + gap;
    panels.replaceChildren();
    for (let h = 0; h < data.n_head; h++) {
      const colourOf = PALETTE[h % PALETTE.length];
      const panel = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "mh-panel", role: "img" });
      const name = fill(T("head_name"), { head: h });
      panel.setAttribute("aria-label", `${name}: ${fill(T("view_chart"), { layer, token: data.tokens[query] ?? "" })}`);
      const label = svg("text", { x: W / 2, y: 14, "text-anchor": "middle", class: "mh-panel-title" });
      label.textContent = name;
      panel.appendChild(label);
      const yOf = (i: number) => 28 + i * rowH + rowH / 2;
      for (let k = 0; k <= query; k++) {
        const w = cellOf(patterns, n, data.n_head, layer, h, query, k);
        const line = svg("line", {
          x1: colW, y1: yOf(query), x2: colW + gap, y2: yOf(k), stroke: colourOf,
          "stroke-width": (0.5 + 6 * w).toFixed(2), "stroke-opacity": (0.12 + 0.88 * w).toFixed(3), class: "mh-link",
        });
        line.dataset.head = String(h);
        line.dataset.k = String(k);
        line.dataset.w = shown(w);
        const tipText = `${name}\n${T("query")}: ${data.tokens[query]}\n${T("key")}: ${data.tokens[k]}\n${T("kind_weights")}: ${shown(w)}`;
        const show = (e: PointerEvent) => {
          viewTip.textContent = tipText;
          viewTip.hidden = false;
          const box = panelsWrap.getBoundingClientRect();
          viewTip.style.left = `${Math.min(e.clientX - box.left + 12, Math.max(0, box.width - 200))}px`;
          viewTip.style.top = `${e.clientY - box.top + 12}px`;
        };
        line.addEventListener("pointerenter", show);
        line.addEventListener("pointerdown", show);
        line.addEventListener("pointerleave", () => { viewTip.hidden = true; });
        const title_ = svg("title");
        title_.textContent = tipText;
        line.appendChild(title_);
        panel.appendChild(line);
      }
      for (let i = 0; i < n; i++) {
        for (const [x, anchor, side] of [[colW - 4, "end", "q"], [colW + gap + 4, "start", "k"]] as [number, string, string][]) {
          const t = svg("text", { x, y: yOf(i) + font / 3, "text-anchor": anchor, class: "mh-tok" });
          t.setAttribute("font-size", String(font));
          if (side === "q" && i === query) t.classList.add("query");
          if (i > query) t.classList.add("later");
          t.textContent = clipText(data.tokens[i], 12);
          panel.appendChild(t);
        }
      }
      panels.appendChild(panel);
    }
    root.setAttribute("data-query", String(query));
  }

  // --- the grid: every head's pattern small, one shared colour scale ---------------------------
  // Weights: the blues over [0, 1]; scores: the red-blue scale over ± the largest |score| any
  // query can see in any head (ui.charts.attention._grid_scale); the masked triangle stays empty.
  let gridGeo = { panel: 60, gap: 10, left: 44, top: 18, labelH: 30, cols: 1 };
  let gridBound = 1;
  let gridBoundFor: boolean | null = null;
  function allHeadsBound(): number {
    if (gridBoundFor === showScores) return gridBound;
    let m = 0;
    const v = values();
    for (let i = 0; i < v.length; i++) if (isFinite(v[i])) m = Math.max(m, Math.abs(v[i]));
    gridBound = m || 1;
    gridBoundFor = showScores;
    return gridBound;
  }
  const gridColour = (v: number, scale: number) => (showScores ? ramp(REDBLUE, (v / scale + 1) / 2) : ramp(BLUES, v));

  function drawGrid(): void {
    gridBody.hidden = !showGrid;
    root.setAttribute("data-grid", showGrid ? "1" : "0");
    if (!showGrid) return;
    const ctx = gridCanvas.getContext("2d");
    if (!ctx) return;
    const small = data.presenter ? 15 : 12;
    const avail = Math.max(240, gridStage.clientWidth || 700);
    const gap = 12, left = small + 30;
    const panel = Math.max(48, Math.min(180, Math.floor((avail - left - 8) / data.n_head) - gap));
    const labelH = 2 * small + 8;
    gridGeo = { panel, gap, left, top: small + 6, labelH, cols: data.n_head };
    (root as HTMLElement & { tjGrid?: unknown }).tjGrid = { ...gridGeo, n }; // for tests: where each cell is
    const w = left + data.n_head * (panel + gap), h = gridGeo.top + data.n_layer * (panel + labelH + gap);
    const dpr = window.devicePixelRatio || 1;
    gridCanvas.width = Math.round(w * dpr);
    gridCanvas.height = Math.round(h * dpr);
    gridCanvas.style.width = `${w}px`;
    gridCanvas.style.height = `${h}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const scale = allHeadsBound();
    const cell = panel / n;
    const v = values();
    ctx.font = `${small}px ${font()}`;
    ctx.textBaseline = "top";
    for (let l = 0; l < data.n_layer; l++) {
      for (let hd = 0; hd < data.n_head; hd++) {
        const x0 = left + hd * (panel + gap), y0 = gridGeo.top + l * (panel + labelH + gap);
        const b = data.behaviours[l * data.n_head + hd];
        ctx.fillStyle = fg();
        ctx.textAlign = "left";
        ctx.font = `600 ${small}px ${font()}`;
        ctx.fillText(`L${l} H${hd}`, x0, y0);
        ctx.font = `${small}px ${font()}`;
        ctx.fillText(clip(ctx, b.label, panel), x0, y0 + small + 2); // the behaviour, in the cell: colour never alone
        const py = y0 + labelH;
        for (let q = 0; q < n; q++) {
          for (let k = 0; k <= q; k++) {
            ctx.fillStyle = gridColour(cellOf(v, n, data.n_head, l, hd, q, k), scale);
            ctx.fillRect(x0 + k * cell, py + q * cell, Math.ceil(cell), Math.ceil(cell));
          }
        }
        ctx.strokeStyle = fg();
        const picked = l === layer && hd === head;
        ctx.lineWidth = picked ? 3 : 0.5;
        ctx.globalAlpha = picked ? 1 : 0.35;
        ctx.strokeRect(x0 - 1, py - 1, panel + 2, panel + 2);
        ctx.globalAlpha = 1;
      }
    }
    ctx.textAlign = "center";
    ctx.fillStyle = fg();
    ctx.font = `600 ${small}px ${font()}`;
    ctx.fillText(T("head"), left + (data.n_head * (panel + gap)) / 2, 0);
    ctx.save();
    ctx.translate(2, gridGeo.top + (data.n_layer * (panel + labelH + gap)) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(T("layer"), 0, 0);
    ctx.restore();
    const heading = fill(T("grid_chart"), { layers: data.n_layer, heads: data.n_head, kind: kind() });
    gridTitle.textContent = heading;
    gridCanvas.setAttribute("aria-label", `${heading}. ${T("grid_caption")}`);
    const bar = el("span", "mh-legend-bar");
    bar.style.background = `linear-gradient(to right, ${(showScores ? REDBLUE : BLUES).join(", ")})`;
    gridLegend.replaceChildren(el("span", "mh-legend-title", kind()), el("span", "", showScores ? (-scale).toFixed(2) : "0"),
      bar, el("span", "", showScores ? scale.toFixed(2) : "1"));
    gridCanvas.dataset.bound = String(scale);
    // Wider than its column (many heads on a phone): a Tab stop that the arrow keys scroll.
    if (gridStage.scrollWidth > gridStage.clientWidth + 1) {
      gridStage.tabIndex = 0;
      gridStage.setAttribute("role", "region");
      gridStage.setAttribute("aria-label", heading);
    } else {
      for (const a of ["tabindex", "role", "aria-label"]) gridStage.removeAttribute(a);
    }
  }

  /** The head and cell under a pointer in the grid, or null. */
  function gridCellAt(e: PointerEvent): [number, number, number, number] | null {
    const box = gridCanvas.getBoundingClientRect();
    const g = gridGeo, x = e.clientX - box.left - g.left, y = e.clientY - box.top - g.top;
    const hd = Math.floor(x / (g.panel + g.gap)), l = Math.floor(y / (g.panel + g.labelH + g.gap));
    if (hd < 0 || hd >= data.n_head || l < 0 || l >= data.n_layer) return null;
    const k = Math.floor(((x - hd * (g.panel + g.gap)) / g.panel) * n);
    const q = Math.floor(((y - l * (g.panel + g.labelH + g.gap) - g.labelH) / g.panel) * n);
    return q >= 0 && q < n && k >= 0 && k < n ? [l, hd, q, k] : null;
  }
  gridCanvas.addEventListener("pointermove", (e) => {
    const c = gridCellAt(e);
    if (!c) { gridTip.hidden = true; return; }
    const [l, hd, q, k] = c;
    const v = cellOf(values(), n, data.n_head, l, hd, q, k);
    gridTip.textContent = `L${l} H${hd}: ${data.behaviours[l * data.n_head + hd].label}\n${T("query")}: ${data.labels[q]}\n` +
      `${T("key")}: ${data.labels[k]}\n${kind()}: ${k > q ? (showScores ? "-inf" : T("masked")) : shown(v)}`;
    gridTip.dataset.q = String(q);
    gridTip.dataset.k = String(k);
    gridTip.hidden = false;
    const box = gridStage.getBoundingClientRect();
    gridTip.style.left = `${Math.min(e.clientX - box.left + 12, Math.max(0, box.width - 220))}px`;
    gridTip.style.top = `${e.clientY - box.top + 12}px`;
  });
  gridCanvas.addEventListener("pointerleave", () => { gridTip.hidden = true; });
  gridCanvas.addEventListener("click", (e) => { const c = gridCellAt(e as PointerEvent); if (c) pick(c[0], c[1], false); });

  function draw(): void {
    const t0 = performance.now();
    radios.forEach((r, i) => {
      const on = i === layer * data.n_head + head;
      r.setAttribute("aria-checked", String(on));
      r.tabIndex = on ? 0 : -1; // one Tab stop: the checked head
    });
    const heading = fill(T("title"), { layer, head, kind: kind() });
    title.textContent = heading;
    canvas.setAttribute("aria-label", `${heading}. ${T(showScores ? "caption_scores" : "caption")}`);
    drawLegend();
    drawHeatmap();
    drawSide();
    caption.textContent = T(showScores ? "caption_scores" : "caption");
    drawNumbers();
    drawGrid();
    drawView();
    root.setAttribute("data-layer", String(layer));
    root.setAttribute("data-head", String(head));
    root.setAttribute("data-scores", showScores ? "1" : "0");
    root.setAttribute("data-ms", (performance.now() - t0).toFixed(2));
  }

  // --- tooltip: hover, touch or the keyboard's cell cursor ------------------------------------
  const showTip = (q: number, k: number) => {
    const v = at(q, k);
    const text = k > q ? (showScores ? "-inf" : T("masked")) : shown(v);
    tip.textContent = `${T("query")}: ${data.labels[q]}\n${T("key")}: ${data.labels[k]}\n${kind()}: ${text}`;
    tip.dataset.q = String(q);
    tip.dataset.k = String(k);
    tip.hidden = false;
    const x = geo.left + (k + 1) * geo.cell + 8, y = geo.topPad + q * geo.cell;
    tip.style.left = `${Math.min(x, Math.max(0, (stage.clientWidth || 400) - 220))}px`;
    tip.style.top = `${y}px`;
  };
  const cellAt = (e: PointerEvent): [number, number] | null => {
    const box = canvas.getBoundingClientRect();
    const k = Math.floor((e.clientX - box.left - geo.left) / geo.cell);
    const q = Math.floor((e.clientY - box.top - geo.topPad) / geo.cell);
    return q >= 0 && q < n && k >= 0 && k < n ? [q, k] : null;
  };
  canvas.addEventListener("pointermove", (e) => { const c = cellAt(e); if (c) showTip(c[0], c[1]); else tip.hidden = true; });
  canvas.addEventListener("pointerdown", (e) => { const c = cellAt(e); if (c) showTip(c[0], c[1]); });
  canvas.addEventListener("pointerleave", () => { tip.hidden = true; });
  canvas.addEventListener("keydown", (e) => {
    const d: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (!(e.key in d)) return;
    e.preventDefault();
    const [dq, dk] = d[e.key];
    const [q, k] = cursor ?? [n - 1, 0];
    cursor = [Math.max(0, Math.min(n - 1, q + dq)), Math.max(0, Math.min(n - 1, k + dk))];
    drawHeatmap();
    showTip(cursor[0], cursor[1]);
  });
  canvas.addEventListener("blur", () => { cursor = null; tip.hidden = true; drawHeatmap(); });

  let seenWidth = -1;
  const observer = new ResizeObserver(() => {
    if (stage.clientWidth !== seenWidth) { seenWidth = stage.clientWidth; drawHeatmap(); }
  });
  observer.observe(stage);
  let seenGridWidth = -1;
  const gridObserver = new ResizeObserver(() => {
    if (gridStage.clientWidth !== seenGridWidth) { seenGridWidth = gridStage.clientWidth; drawGrid(); }
  });
  gridObserver.observe(gridStage);
  draw();
  const stopTheme = watchTheme(root, draw);
  return () => { observer.disconnect(); gridObserver.disconnect(); stopTheme(); };
}

function clipText(text: string, chars: number): string {
  return text.length > chars ? text.slice(0, chars - 1) + "…" : text;
}

function clip(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (ctx.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(s + "…").width > width) s = s.slice(0, -1);
  return s + "…";
}
