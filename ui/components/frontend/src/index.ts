// The journey picture: one prompt travelling through the live model, left to right.
// A Streamlit components-v2 module: Streamlit calls the default export with the data
// Python computed (core/lessons/journey.py) and the labels it translated; this file only draws.
// Every user-visible string goes in through textContent or an attribute, never as markup.

import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";
import { distribution, draw, Knobs, uniform } from "./sampling";

interface Tok { text: string; id: number }
interface Rows { first: number[][]; norm: number[] }
interface Layer {
  resid_pre_norm: number[];
  attn_out_norm: number[];
  resid_mid_norm: number[];
  mlp_out_norm: number[];
  resid_post_norm: number[];
  attn: number[][][];
  attn_hidden: number[][];
}
interface Journey {
  model: { n_layer: number; n_head: number; d_model: number; d_mlp: number; vocab_size: number; positional: string; norm: string; mlp: string };
  n_tokens: number;
  row_start: number;
  tokens: Tok[];
  embed: Rows;
  pos: Rows | null;
  resid0: Rows;
  query_positions: number[];
  layers: Layer[];
  final_norm: Rows;
  logits: { ids: number[]; values: number[]; labels: string[]; tail: { count: number; bins: [number, number][] } };
  top: { id: number; label: string; logit: number; prob: number }[];
  shapes: Record<string, number[] | null>;
}
interface Data {
  journey: Journey;
  labels: Record<string, string>;
  pages: Record<string, string>;
  knobs: { temperature: number; top_k: number; top_p: number };
  seed: number;
  presenter: boolean;
  focus: { layer: number; head: number; query: number } | null;
  coref: string | null;
  autoplay: string | null;
}
interface Component {
  data: Data;
  key: string;
  parentElement: HTMLElement | ShadowRoot;
  setTriggerValue: (name: string, value: unknown) => void;
}
interface View {
  layer: number;
  head: number;
  query: number;
  knobs: Knobs;
  stage: number; // animation position (-1: not started)
  playing: boolean;
  timer: number | null;
  autoplayDone: string | null;
  focusFrom: string;
}

const STEP_MS = 500;
const views = new Map<string, View>();
const tips = new WeakMap<Element, () => string>();

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
const SVG = "http://www.w3.org/2000/svg";
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}
function fmt(x: number, digits = 4): string {
  if (!isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return x.toExponential(2);
  return x.toFixed(digits);
}
function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m));
}

// --- colour -------------------------------------------------------------------------
function parseColour(text: string): [number, number, number] | null {
  const s = text.trim();
  let m = /^#([0-9a-f]{6})$/i.exec(s);
  if (m) return [0, 2, 4].map((i) => parseInt(m![1].slice(i, i + 2), 16)) as [number, number, number];
  m = /^#([0-9a-f]{3})$/i.exec(s);
  if (m) return [0, 1, 2].map((i) => parseInt(m![1][i] + m![1][i], 16)) as [number, number, number];
  m = /^rgba?\((\d+)[,\s]+(\d+)[,\s]+(\d+)/i.exec(s);
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  return null;
}
function isDark(node: Element): boolean {
  const bg = parseColour(getComputedStyle(node).getPropertyValue("--st-background-color"));
  if (!bg) return false;
  const [r, g, b] = bg.map((c) => c / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45;
}
// diverging: negative blue, positive red, zero = the background (so dark stays dark)
function heat(v: number, scale: number, dark: boolean): string {
  const t = Math.max(-1, Math.min(1, scale > 0 ? v / scale : 0));
  const base = dark ? [30, 34, 44] : [248, 249, 252];
  const pos = dark ? [255, 110, 90] : [200, 40, 40];
  const neg = dark ? [90, 160, 255] : [40, 90, 200];
  const target = t >= 0 ? pos : neg;
  const a = Math.abs(t);
  const c = base.map((b, i) => Math.round(b + (target[i] - b) * a));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// --- the stages -----------------------------------------------------------------------
interface Stage { id: string; page: string | null; node: HTMLElement; title: string }

export default function mount(component: Component): () => void {
  const { data, key, parentElement, setTriggerValue } = component;
  const J = data.journey;
  const L = (name: string) => data.labels[name] ?? name;
  const n = J.tokens.length; // rows drawn (the prompt's last n tokens)
  const P = (i: number) => i + J.row_start; // row -> position in the prompt
  const full = J.query_positions.length === n;

  let view = views.get(key);
  // The sampling knobs are ui.state's (the Logits and Generation labs share them): the browser's
  // uncommitted value from another page of this tab wins unless the server's changed (knob_state).
  // Defaults as declared in ui/state.py: a default stays out of the link.
  const knobSpecs: Record<keyof Knobs, KnobSpec> = {
    temperature: { name: "sampling_temperature", value: data.knobs.temperature, default: 1 },
    topK: { name: "sampling_top_k", value: data.knobs.top_k, default: 0 },
    topP: { name: "sampling_top_p", value: data.knobs.top_p, default: 1 },
  };
  const focusFrom = JSON.stringify([data.focus, n, J.model.n_layer, J.model.n_head]);
  if (!view) {
    view = {
      layer: 0, head: 0, query: n - 1,
      knobs: { temperature: data.knobs.temperature, topK: data.knobs.top_k, topP: data.knobs.top_p },
      stage: -1, playing: false, timer: null, autoplayDone: null, focusFrom: "",
    };
    views.set(key, view);
  }
  const V = view;
  if (V.timer !== null) { clearTimeout(V.timer); V.timer = null; }
  V.playing = false;
  V.stage = -1;
  V.knobs = { temperature: restoreKnob(knobSpecs.temperature), topK: restoreKnob(knobSpecs.topK),
    topP: restoreKnob(knobSpecs.topP) };
  if (V.focusFrom !== focusFrom) {
    V.focusFrom = focusFrom;
    V.query = data.focus ? data.focus.query : n - 1;
    if (data.focus) { V.layer = data.focus.layer; V.head = data.focus.head; }
  }
  V.layer = Math.min(Math.max(0, V.layer), J.model.n_layer - 1);
  V.head = Math.min(Math.max(0, V.head), J.model.n_head - 1);
  V.query = Math.min(Math.max(0, V.query), n - 1);
  if (!full) V.query = n - 1;

  // Rebuild from scratch on every call (Streamlit calls again when the data changes).
  for (const old of Array.from(parentElement.children)) if (old.classList.contains("tj")) old.remove();
  const root = el("div", "tj");
  root.setAttribute("data-testid", "journey");
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);
  if (isDark(root)) root.classList.add("dark");
  const dark = () => root.classList.contains("dark");

  const tip = el("div", "tj-tip");
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;

  // --- toolbar
  const bar = el("div", "tj-toolbar");
  const animate = el("button", "tj-btn tj-animate", "▶ " + L("animate"));
  const pause = el("button", "tj-btn tj-pause", "⏸ " + L("pause"));
  const step = el("button", "tj-btn tj-step", L("step") + " ⏭");
  const status = el("span", "tj-status");
  status.setAttribute("aria-live", "polite");
  bar.append(animate, pause, step, status);

  const pickers = el("div", "tj-pickers");
  const layerLabel = el("label", "tj-picker");
  layerLabel.append(el("span", "", L("layer")));
  const layerSelect = el("select", "tj-layer-select");
  for (let l = 0; l < J.model.n_layer; l++) {
    const opt = el("option", "", String(l));
    opt.value = String(l);
    layerSelect.append(opt);
  }
  layerSelect.value = String(V.layer);
  layerLabel.append(layerSelect);
  // The heads are one radio group: one Tab stop (the chosen head), arrow keys move the choice
  // (WAI-ARIA radio group pattern), Home/End jump to the first/last head.
  const headBox = el("div", "tj-heads");
  headBox.setAttribute("role", "radiogroup");
  const headsLabel = el("span", "tj-heads-label", L("head"));
  headsLabel.id = `tj-heads-label-${key.replace(/[^\w-]/g, "_")}`;
  headBox.setAttribute("aria-labelledby", headsLabel.id);
  headBox.append(headsLabel);
  const headButtons: HTMLButtonElement[] = [];
  const pickHead = (h: number, focus: boolean) => {
    V.head = h; drawArcs(); markHeads();
    if (focus) headButtons[h].focus();
  };
  for (let h = 0; h < J.model.n_head; h++) {
    const b = el("button", "tj-head", String(h));
    b.type = "button";
    b.setAttribute("role", "radio");
    b.addEventListener("click", () => pickHead(h, false));
    b.addEventListener("keydown", (e) => {
      const last = J.model.n_head - 1;
      const to = e.key === "ArrowRight" || e.key === "ArrowDown" ? (V.head + 1) % (last + 1)
        : e.key === "ArrowLeft" || e.key === "ArrowUp" ? (V.head + last) % (last + 1)
        : e.key === "Home" ? 0 : e.key === "End" ? last : -1;
      if (to < 0) return;
      e.preventDefault();
      e.stopPropagation(); // not the block's own arrow keys (they move the query)
      pickHead(to, true);
    });
    headButtons.push(b);
    headBox.append(b);
  }
  pickers.append(layerLabel, headBox);
  if (data.coref) {
    const coref = el("button", "tj-btn tj-coref", L("coref"));
    coref.title = L("coref_help");
    coref.addEventListener("click", () => setTriggerValue("action", { kind: "preset", key: data.coref }));
    pickers.append(coref);
  }
  root.append(bar, pickers);

  // --- stage strip
  const strip = el("div", "tj-strip");
  root.append(strip);
  const stages: Stage[] = [];
  function stage(id: string, title: string, shape: string, pageKey: string, parent: HTMLElement = strip): HTMLElement {
    // A stage is a named group (its title); the page it opens is a button holding the title:
    // its name starts with its visible words (axe: label-content-name-mismatch), and a group,
    // unlike a whole box playing "link", may hold the knobs and buttons inside it.
    const node = el("section", "tj-stage");
    node.dataset.stage = id;
    const page = data.pages[pageKey] ?? null;
    node.setAttribute("role", "group");
    const titleId = `tj-${key.replace(/[^\w-]/g, "_")}-${id}`;
    const head = el("div", "tj-stage-head");
    const titleEl = page ? el("button", "tj-stage-title tj-open", title) : el("span", "tj-stage-title", title);
    titleEl.id = titleId;
    node.setAttribute("aria-labelledby", titleId);
    head.append(titleEl);
    if (shape) head.append(el("span", "tj-shape", shape));
    node.append(head);
    if (page) {
      node.classList.add("clickable");
      const go = () => setTriggerValue("action", { kind: "open", page });
      const button = titleEl as HTMLButtonElement;
      button.type = "button";
      button.setAttribute("aria-label", `${title} — ${L("open")}`);
      button.addEventListener("click", (e) => { e.stopPropagation(); go(); });
      node.addEventListener("click", (e) => {
        if ((e.target as Element).closest("button,input,select,.tj-knobs")) return;
        go();
      });
    }
    parent.append(node);
    stages.push({ id, page, node, title });
    return node;
  }
  const arrow = (parent: HTMLElement = strip, text = "→") => {
    const a = el("div", "tj-arrow", text);
    a.setAttribute("aria-hidden", "true");
    parent.append(a);
  };

  function rowsBox(): HTMLElement { return el("div", "tj-rows"); }
  function tokenRow(i: number): HTMLElement {
    const r = el("div", "tj-row");
    r.dataset.row = String(i);
    return r;
  }

  // 1. tokens
  const sTok = stage("tokens", L("tokens"), `[${n}]`, "tokens");
  const tokRows = rowsBox();
  J.tokens.forEach((tok, i) => {
    const r = tokenRow(i);
    const chip = el("span", "tj-chip");
    chip.append(el("span", "tj-chip-text", tok.text), el("span", "tj-chip-id", String(tok.id)));
    tips.set(chip, () => fill(L("tip_token"), { i: P(i), text: tok.text, id: tok.id }));
    r.append(chip);
    tokRows.append(r);
  });
  sTok.append(tokRows);
  if (J.row_start > 0) sTok.insertBefore(el("div", "tj-note", fill(L("hidden_rows"), { k: J.row_start })), tokRows);
  arrow();

  // mini heatmaps of vectors' first numbers
  function heatRows(rows: Rows, what: string): HTMLElement {
    const box = rowsBox();
    let scale = 0;
    for (const row of rows.first) for (const v of row) scale = Math.max(scale, Math.abs(v));
    rows.first.forEach((row, i) => {
      const r = tokenRow(i);
      const s = svg("svg", { width: row.length * 9, height: 18, class: "tj-heat" });
      row.forEach((v, j) => {
        const cell = svg("rect", { x: j * 9, y: 1, width: 8, height: 16, rx: 1.5, fill: heat(v, scale, dark()) });
        tips.set(cell, () => fill(L("tip_cell"), { what, i: P(i), token: J.tokens[i].text, j, v: fmt(v) }));
        s.append(cell);
      });
      tips.set(s, () => fill(L("tip_vector"), { what, i: P(i), token: J.tokens[i].text, norm: fmt(rows.norm[i], 3), first: row.slice(0, 6).map((v) => fmt(v, 3)).join(", ") }));
      r.append(s);
      box.append(r);
    });
    return box;
  }

  // 2. embedding rows
  const sEmb = stage("embed", L("embed"), `${n}×${J.model.d_model}`, "embed");
  sEmb.append(heatRows(J.embed, L("embed")));
  arrow(strip, "+");

  // 3. position
  const sPos = stage("pos", L("pos"), J.pos ? `${n}×${J.model.d_model}` : "RoPE", "pos");
  if (J.pos) {
    const pair = el("div", "tj-pair");
    pair.append(heatRows(J.pos, L("pos")), el("div", "tj-eq", "="), heatRows(J.resid0, L("resid0")));
    sPos.append(pair);
    sPos.append(el("div", "tj-note", fill(L("pos_added"), { kind: J.model.positional })));
  } else {
    sPos.classList.add("rope");
    sPos.append(el("div", "tj-note tj-rope", L("pos_rope")));
  }
  arrow();

  // 4. the blocks, in their own scroller
  const layersBox = el("div", "tj-layers");
  strip.append(layersBox);
  let maxResid = 0, maxMlp = 0;
  for (const layer of J.layers) {
    for (const v of layer.resid_post_norm) maxResid = Math.max(maxResid, v);
    for (const v of layer.resid_pre_norm) maxResid = Math.max(maxResid, v);
    for (const v of layer.mlp_out_norm) maxMlp = Math.max(maxMlp, v);
  }
  const ROW = data.presenter ? 34 : 28;
  const BW = 150;
  const arcLayers: SVGGElement[] = [];
  const blockNodes: HTMLElement[] = [];
  J.layers.forEach((layer, l) => {
    if (l > 0) arrow(layersBox);
    const node = stage(`layer-${l}`, fill(L("block"), { l }), `${J.model.n_head}×${n}×${n}`, "attn", layersBox);
    node.classList.add("tj-block");
    blockNodes.push(node);
    const s = svg("svg", { width: BW, height: n * ROW, class: "tj-block-svg" });
    // residual stream lines: thickness = ‖resid‖ after this block
    layer.resid_post_norm.forEach((norm, i) => {
      const y = i * ROW + ROW / 2;
      const w = 1 + 9 * (maxResid > 0 ? norm / maxResid : 0);
      const line = svg("line", { x1: 0, x2: BW, y1: y, y2: y, "stroke-width": w, class: "tj-resid" });
      tips.set(line, () => fill(L("tip_resid"), { l, i: P(i), token: J.tokens[i].text, pre: fmt(layer.resid_pre_norm[i], 3), attn: fmt(layer.attn_out_norm[i], 3), mlp: fmt(layer.mlp_out_norm[i], 3), post: fmt(norm, 3) }));
      s.append(line);
      // MLP bar (‖MLP out‖), clicking it opens the block page when there is one
      const mw = 40 * (maxMlp > 0 ? layer.mlp_out_norm[i] / maxMlp : 0);
      const mlp = svg("rect", { x: BW - 46, y: y - 6, width: Math.max(1, mw), height: 12, rx: 2, class: "tj-mlp" });
      tips.set(mlp, () => fill(L("tip_mlp"), { l, i: P(i), token: J.tokens[i].text, v: fmt(layer.mlp_out_norm[i], 3), d: J.model.d_mlp }));
      if (data.pages.mlp) {
        mlp.classList.add("clickable");
        mlp.addEventListener("click", (e) => { e.stopPropagation(); setTriggerValue("action", { kind: "open", page: data.pages.mlp }); });
      }
      s.append(mlp);
      // hover target: selects this row as the query whose arcs are drawn
      const hit = svg("rect", { x: 0, y: i * ROW, width: BW - 50, height: ROW, class: "tj-hit" });
      if (full) hit.addEventListener("mouseenter", () => { if (V.query !== i) { V.query = i; drawArcs(); } });
      s.append(hit);
    });
    const g = svg("g", { class: "tj-arcs" });
    s.append(g);
    arcLayers.push(g);
    const mlpLabel = svg("text", { x: BW - 46, y: n * ROW - 2, class: "tj-mini" });
    mlpLabel.textContent = "MLP";
    s.append(mlpLabel);
    node.append(s);
    node.addEventListener("keydown", (e) => {
      if (!full) return;
      if (e.key === "ArrowUp" || e.key === "ArrowDown") {
        e.preventDefault();
        V.query = Math.min(n - 1, Math.max(0, V.query + (e.key === "ArrowUp" ? -1 : 1)));
        drawArcs();
      }
    });
    node.addEventListener("focusin", () => { V.layer = l; layerSelect.value = String(l); markLayer(false); });
  });

  function drawArcs() {
    const row = J.query_positions.indexOf(V.query);
    J.layers.forEach((layer, l) => {
      const g = arcLayers[l];
      while (g.firstChild) g.removeChild(g.firstChild);
      if (row < 0) return;
      const weights = layer.attn[V.head][row];
      const yq = V.query * ROW + ROW / 2;
      const x0 = 14;
      weights.forEach((w, k) => {
        if (k > V.query || w <= 0) return;
        const yk = k * ROW + ROW / 2;
        let shape: SVGElement;
        if (k === V.query) {
          shape = svg("circle", { cx: x0, cy: yq, r: 2 + 7 * w, class: "tj-arc self" });
        } else {
          const bulge = Math.min(BW - 60, 12 + 0.45 * (yq - yk));
          shape = svg("path", { d: `M${x0},${yq} C${x0 + bulge},${yq} ${x0 + bulge},${yk} ${x0},${yk}`, "stroke-width": 0.6 + 9 * w, class: "tj-arc" });
        }
        shape.setAttribute("opacity", String(0.2 + 0.8 * w));
        tips.set(shape, () => fill(L("tip_attn"), { l, h: V.head, q: P(V.query), qt: J.tokens[V.query].text, k: P(k), kt: J.tokens[k].text, w: fmt(w) }));
        g.append(shape);
      });
      const dot = svg("circle", { cx: x0, cy: yq, r: 3.5, class: "tj-query" });
      g.append(dot);
    });
    for (const r of Array.from(root.querySelectorAll(".tj-row.query"))) r.classList.remove("query");
    for (const r of Array.from(root.querySelectorAll(`.tj-rows > .tj-row[data-row="${V.query}"]`))) r.classList.add("query");
    status.textContent = fill(L("status_query"), { q: P(V.query), token: J.tokens[V.query].text, h: V.head });
  }
  function markHeads() {
    headButtons.forEach((b, h) => {
      b.setAttribute("aria-checked", String(h === V.head));
      b.tabIndex = h === V.head ? 0 : -1;
      b.classList.toggle("on", h === V.head);
    });
  }
  function markLayer(scroll: boolean) {
    blockNodes.forEach((b, l) => b.classList.toggle("picked", l === V.layer));
    if (scroll) scrollInto(layersBox, blockNodes[V.layer]);
  }
  layerSelect.addEventListener("change", () => { V.layer = Number(layerSelect.value); markLayer(true); });
  arrow();

  // 5. final norm
  const sFin = stage("final_norm", L("final_norm"), `${n}×${J.model.d_model}`, "final_norm");
  sFin.append(heatRows(J.final_norm, L("final_norm")));
  arrow();

  // 6. logits of the last position (sorted, best first)
  const sLog = stage("logits", L("logits"), `[${J.model.vocab_size}]`, "logits");
  {
    const shown = J.logits.values.slice(0, 200);
    const W = 150, H = 110;
    const hi = shown[0], lo = shown[shown.length - 1];
    const s = svg("svg", { width: W, height: H, class: "tj-logit-svg" });
    const pts = shown.map((v, i) => `${(i / Math.max(1, shown.length - 1)) * W},${H - 6 - ((v - lo) / Math.max(1e-9, hi - lo)) * (H - 16)}`);
    s.append(svg("polyline", { points: pts.join(" "), class: "tj-logit-line" }));
    const hit = svg("rect", { x: 0, y: 0, width: W, height: H, class: "tj-hit" });
    let idx = 0;
    hit.addEventListener("mousemove", (e) => {
      const box = hit.getBoundingClientRect();
      idx = Math.round(((e.clientX - box.left) / box.width) * (shown.length - 1));
    });
    tips.set(hit, () => fill(L("tip_logit"), { r: idx + 1, token: J.logits.labels[idx] ?? "?", id: J.logits.ids[idx], v: fmt(shown[idx], 3) }));
    s.append(hit);
    sLog.append(s, el("div", "tj-note", fill(L("logits_note"), { top: J.top[0].label, v: fmt(J.top[0].logit, 3) })));
  }
  arrow();

  // 7. probabilities with the knobs
  const sProb = stage("probs", L("probs"), `[${J.top.length}]`, "probs");
  const knobs = el("div", "tj-knobs");
  function knob(name: string, min: number, max: number, stepv: number, get: () => number, set: (v: number) => void, show: (v: number) => string) {
    const wrap = el("label", "tj-knob");
    wrap.dataset.knob = name;
    const caption = el("span", "tj-knob-label", L(name));
    const input = el("input");
    input.type = "range";
    input.min = String(min); input.max = String(max); input.step = String(stepv);
    input.value = String(get());
    const out = el("output", "tj-knob-value", show(get()));
    input.addEventListener("input", () => { set(Number(input.value)); out.textContent = show(get()); redrawBars(); });
    wrap.append(caption, input, out);
    knobs.append(wrap);
  }
  knob("temperature", 0, 2, 0.05, () => V.knobs.temperature, (v) => { V.knobs.temperature = v; saveKnob(knobSpecs.temperature, v); }, (v) => v.toFixed(2));
  knob("top_k", 0, 50, 1, () => V.knobs.topK, (v) => { V.knobs.topK = v; saveKnob(knobSpecs.topK, v); }, (v) => (v === 0 ? L("off") : String(v)));
  knob("top_p", 0.05, 1, 0.05, () => V.knobs.topP, (v) => { V.knobs.topP = v; saveKnob(knobSpecs.topP, v); }, (v) => (v >= 1 ? L("off") : v.toFixed(2)));
  sProb.append(knobs);
  const bars = el("div", "tj-bars");
  bars.setAttribute("role", "list"); // each row a list item: its name (token and p) is allowed there
  const barRows: { fillEl: HTMLElement; val: HTMLElement; row: HTMLElement }[] = [];
  J.top.forEach((t, i) => {
    const row = el("div", "tj-bar-row");
    row.dataset.id = String(t.id);
    row.setAttribute("role", "listitem");
    row.tabIndex = 0;
    const label = el("span", "tj-bar-label", t.label);
    const track = el("span", "tj-bar-track");
    const fillEl = el("span", "tj-bar");
    track.append(fillEl);
    const val = el("span", "tj-bar-value");
    row.append(label, track, val);
    tips.set(row, () => {
      const d = current;
      return fill(L("tip_prob"), { token: t.label, id: t.id, p: fmt(d.final[i], 4), before: fmt(d.tempered[i], 4), logit: fmt(t.logit, 3), cut: d.cutBy[i] ? L("cut_" + d.cutBy[i]) : "" });
    });
    bars.append(row);
    barRows.push({ fillEl, val, row });
  });
  sProb.append(bars);
  arrow();

  // 8. the sampled token, appended
  const sOut = stage("output", L("output"), "", "output");
  const outChip = el("div", "tj-out-chip");
  const outText = el("div", "tj-out-text");
  const gen = el("button", "tj-btn tj-generate", L("generate"));
  sOut.append(outChip, outText, gen);

  let current = distribution(J.logits.values, J.logits.tail.bins, V.knobs);
  let sampled = 0;
  function redrawBars() {
    current = distribution(J.logits.values, J.logits.tail.bins, V.knobs);
    barRows.forEach((b, i) => {
      const p = current.final[i] ?? 0;
      b.fillEl.style.width = `${(100 * p).toFixed(2)}%`;
      b.fillEl.dataset.p = String(p);
      b.val.textContent = p >= 0.0005 ? p.toFixed(3) : p > 0 ? p.toExponential(1) : "0";
      b.row.classList.toggle("cut", !current.kept[i]);
      b.row.setAttribute("aria-label", `${J.top[i].label}: ${p.toFixed(4)}`);
    });
    const u = uniform(data.seed * 1000003 + n);
    sampled = draw(current.final, J.logits.labels.length, u);
    outChip.textContent = J.logits.labels[sampled] ?? "?";
    outChip.dataset.id = String(J.logits.ids[sampled]);
    const tail = J.tokens.slice(-4).map((t) => t.text).join("");
    outText.textContent = fill(L("output_note"), { p: fmt(current.final[sampled], 3), tail, token: J.logits.labels[sampled] ?? "?" });
    barRows.forEach((b, i) => b.row.classList.toggle("sampled", i === sampled));
  }
  gen.addEventListener("click", () => {
    setTriggerValue("action", {
      kind: "generate", id: J.logits.ids[sampled], n: J.n_tokens,
      knobs: { temperature: V.knobs.temperature, top_k: V.knobs.topK, top_p: V.knobs.topP },
    });
  });

  // --- tooltips (one, delegated; text only)
  function showTip(target: Element, x: number, y: number) {
    let node: Element | null = target;
    while (node && node !== root && !tips.has(node)) node = node.parentElement ?? (node.parentNode as Element | null);
    if (!node || !tips.has(node)) { tip.hidden = true; return; }
    tip.textContent = tips.get(node)!();
    tip.hidden = false;
    const box = root.getBoundingClientRect();
    const left = Math.min(x - box.left + 14, Math.max(0, box.width - 260));
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${y - box.top + 16}px`;
  }
  root.addEventListener("mousemove", (e) => showTip(e.target as Element, e.clientX, e.clientY));
  root.addEventListener("mouseleave", () => { tip.hidden = true; });
  root.addEventListener("focusin", (e) => {
    const t = e.target as HTMLElement;
    if (tips.has(t)) { const r = t.getBoundingClientRect(); showTip(t, r.left, r.bottom - 8); }
  });
  root.addEventListener("focusout", () => { tip.hidden = true; });
  root.append(tip);

  // --- animation: a token walks through the stages
  function scrollInto(box: HTMLElement, node: HTMLElement) {
    const b = box.getBoundingClientRect(), r = node.getBoundingClientRect();
    if (box.scrollWidth > box.clientWidth && (r.left < b.left || r.right > b.right)) {
      box.scrollLeft += r.left - b.left - (b.width - r.width) / 2;
    }
    if (box.scrollHeight > box.clientHeight && (r.top < b.top || r.bottom > b.bottom)) {
      box.scrollTop += r.top - b.top - 8;
    }
  }
  function showStage(i: number) {
    V.stage = i;
    stages.forEach((s, j) => {
      s.node.classList.toggle("active", j === i);
      s.node.classList.toggle("passed", j < i);
    });
    const s = stages[i];
    if (!s) return;
    if (s.id.startsWith("layer-")) scrollInto(layersBox, s.node);
    scrollInto(strip, s.id.startsWith("layer-") ? layersBox : s.node);
    status.textContent = fill(L("status_stage"), { i: i + 1, n: stages.length, name: s.title });
    if (i === stages.length - 1) root.dataset.anim = "done";
    else root.dataset.anim = "running";
  }
  function tick() {
    V.timer = null;
    if (!V.playing) return;
    if (V.stage >= stages.length - 1) { V.playing = false; syncButtons(); return; }
    showStage(V.stage + 1);
    V.timer = window.setTimeout(tick, STEP_MS);
  }
  function syncButtons() {
    animate.disabled = V.playing;
    pause.disabled = !V.playing;
  }
  function play() {
    if (V.stage >= stages.length - 1) V.stage = -1;
    V.playing = true;
    syncButtons();
    if (V.timer !== null) clearTimeout(V.timer);
    tick();
  }
  animate.addEventListener("click", play);
  pause.addEventListener("click", () => { V.playing = false; if (V.timer !== null) { clearTimeout(V.timer); V.timer = null; } syncButtons(); });
  step.addEventListener("click", () => {
    V.playing = false;
    if (V.timer !== null) { clearTimeout(V.timer); V.timer = null; }
    showStage(V.stage >= stages.length - 1 ? 0 : V.stage + 1);
    syncButtons();
  });

  // --- layout: stages stacked vertically on a narrow screen
  const ro = new ResizeObserver(() => root.classList.toggle("narrow", root.clientWidth < 600));
  ro.observe(root);
  root.classList.toggle("narrow", root.clientWidth < 600);

  redrawBars();
  markHeads();
  markLayer(false);
  drawArcs();
  syncButtons();
  root.dataset.ready = "1";
  if (data.autoplay && V.autoplayDone !== data.autoplay) {
    V.autoplayDone = data.autoplay;
    play();
  }

  return () => {
    ro.disconnect();
    if (V.timer !== null) { clearTimeout(V.timer); V.timer = null; }
  };
}
