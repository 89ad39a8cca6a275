// A 3-D point space drawn on a 2-D canvas: the embedding map (about a thousand tokens after
// PCA) and the similarity lab's arrows. A Streamlit components-v2 module; Python builds the
// data (ui/charts/space3d.py) and translates every label, this file only draws.
//
// Why not Plotly's scatter3d: it draws with WebGL, and a classroom laptop or a server-side
// browser without a GPU renders WebGL in software: the map's first drawing cost seconds.
// A thousand circles sorted by depth on a canvas take a few milliseconds anywhere.
// Every user-visible string goes in through textContent or fillText, never as markup.

import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";

interface Group {
  name: string;
  colour: string;
  size: number; // dot radius in CSS pixels
  opacity: number;
  ring: boolean; // drawn as an open circle with its label (the prompt's tokens)
  legend: boolean; // has a legend button that shows and hides it
}
interface Points {
  x: number[];
  y: number[];
  z: number[];
  group: number[];
  label: string[];
  id: number[];
}
interface Arrow {
  name: string;
  colour: string;
  tip: [number, number, number];
}
interface Labels {
  token: string;
  id: string;
  group: string;
  vector: string;
  reset: string;
  zoom_in: string;
  zoom_out: string;
  hint: string;
  legend: string;
}
// The embedding map's own display toggles, answered here without the server: hide the grey
// "other" group, and switch between two PCA fits of the same points (their coordinates, axis
// titles and variance line). Their durable values live in the address bar (knob_state.ts).
interface Fit {
  key: number; // the value of knobs.fit (0: all tokens, 1: the category words)
  label: string;
  axes: [string, string, string];
  x: number[];
  y: number[];
  z: number[];
  caption: string;
}
interface Views {
  knobs: { only: KnobSpec; fit: KnobSpec }; // flags as 0 / 1 (ui.state's link form)
  only_label: string;
  fit_label: string;
  fit_help: string;
  other_group: number; // the group "only categories" hides (-1: none)
  fits: Fit[];
}
interface Data {
  views?: Views | null;
  title: string;
  summary?: string; // one sentence for screen readers: what the map shows for this prompt
  axes: [string, string, string];
  height: number;
  groups: Group[];
  points: Points;
  arrows: Arrow[];
  range: [number, number] | null; // one range for all three axes (arrows); null: each axis its data's
  labels: Labels;
  presenter: boolean;
}
interface Component {
  data: Data;
  key: string;
  parentElement: HTMLElement | ShadowRoot;
}
interface Camera {
  yaw: number;
  pitch: number;
  zoom: number;
  hidden: Set<string>; // legend names the student switched off
}

// Plotly's default eye (1.25, 1.25, 1.25): x to the lower left, y to the lower right, z up.
const HOME = { yaw: Math.PI / 4, pitch: 0.6, zoom: 1 };
const DISTANCE = 4.2; // camera distance in cube half-widths: mild perspective
const MARGIN_X = 56; // CSS pixels kept free around the cube for tick labels and axis titles
const MARGIN_Y = 40;
const cameras = new Map<string, Camera>(); // per component key: survives reruns, like Plotly's uirevision

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}
const HEX = /^#[0-9a-f]{6}$/i;
function colour(text: string, fallback: string): string {
  return HEX.test(text) ? text : fallback;
}
function rgba(hex: string, alpha: number): string {
  const v = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return `rgba(${v[0]},${v[1]},${v[2]},${Math.max(0, Math.min(1, alpha))})`;
}
function fmt(x: number): string {
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return x.toExponential(2);
  return x.toFixed(3);
}

// "Nice" tick values inside [lo, hi]: steps of 1, 2 or 5 times a power of ten.
export function ticks(lo: number, hi: number, count = 5): number[] {
  const span = hi - lo;
  if (!(span > 0) || !isFinite(span)) return [lo];
  const raw = span / count;
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}
function tickText(v: number, step: number): string {
  const digits = Math.max(0, Math.min(4, -Math.floor(Math.log10(step) + 1e-9)));
  return v.toFixed(digits);
}

// The view: data -> cube [-1, 1]^3 -> camera -> screen.
interface Axis { lo: number; hi: number }
interface Projected { sx: number; sy: number; depth: number; scale: number }

function axesOf(data: Data): [Axis, Axis, Axis] {
  const cols = [data.points.x, data.points.y, data.points.z];
  return [0, 1, 2].map((k) => {
    if (data.range) return { lo: data.range[0], hi: data.range[1] };
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of cols[k]) if (isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    for (const a of data.arrows) { lo = Math.min(lo, a.tip[k], 0); hi = Math.max(hi, a.tip[k], 0); }
    if (!isFinite(lo)) { lo = -1; hi = 1; }
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
    const pad = 0.04 * (hi - lo);
    return { lo: lo - pad, hi: hi + pad };
  }) as [Axis, Axis, Axis];
}

export default function mount(component: Component): () => void {
  const { data, key, parentElement } = component;
  const L = data.labels;
  let cam = cameras.get(key);
  if (!cam) {
    cam = { ...HOME, hidden: new Set<string>() };
    cameras.set(key, cam);
  }
  const C = cam;
  const groups = data.groups.map((g) => ({ ...g, colour: colour(g.colour, "#888888") }));
  const arrows = data.arrows.map((a) => ({ ...a, colour: colour(a.colour, "#888888") }));
  const V = data.views ?? null;
  const fitKeys = V ? V.fits.map((f) => f.key) : [];
  let fitKey = V ? restoreKnob(V.knobs.fit) : 0;
  if (V && !fitKeys.includes(fitKey)) { fitKey = fitKeys[0]; saveKnob(V.knobs.fit, fitKey); }
  let only = V ? restoreKnob(V.knobs.only) === 1 : false;
  let P = data.points;
  let axisTitles = data.axes;
  let axes = axesOf(data);
  const toCube = (v: number, k: number) => ((v - axes[k].lo) / (axes[k].hi - axes[k].lo)) * 2 - 1;
  const n = Math.min(P.x.length, P.y.length, P.z.length, P.group.length);
  const cube = new Float64Array(n * 3);
  const place3d = () => {
    const fit = V?.fits.find((f) => f.key === fitKey);
    if (fit) {
      P = { ...data.points, x: fit.x, y: fit.y, z: fit.z };
      axisTitles = fit.axes;
      axes = axesOf({ ...data, points: P });
    }
    for (let i = 0; i < n; i++) {
      cube[3 * i] = toCube(P.x[i], 0);
      cube[3 * i + 1] = toCube(P.y[i], 1);
      cube[3 * i + 2] = toCube(P.z[i], 2);
    }
  };
  place3d();

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("s3")) old.remove();
  const root = el("div", "s3");
  root.setAttribute("data-testid", "space3d");
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);
  const title = el("div", "s3-title", data.title);
  root.appendChild(title);

  const bar = el("div", "s3-bar");
  const legend = el("div", "s3-legend");
  legend.setAttribute("role", "group");
  legend.setAttribute("aria-label", L.legend);
  const tools = el("div", "s3-tools");
  bar.append(legend, tools);
  root.appendChild(bar);

  const stage = el("div", "s3-stage");
  const canvas = el("canvas", "s3-canvas");
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  // The summary for this prompt (Python writes it, ui.charts.space3d.space_summary); the
  // numbers as a table follow the component on the page.
  canvas.setAttribute("aria-label", [data.summary || `${data.title}.`, L.hint].join(" "));
  const tip = el("div", "s3-tip");
  tip.setAttribute("role", "status");
  tip.hidden = true;
  stage.append(canvas, tip);
  root.appendChild(stage);
  root.appendChild(el("div", "s3-hint", L.hint));

  const visibleGroup = groups.map((g) => !(g.legend && C.hidden.has(g.name)));
  // legend buttons exist only for legend groups: a group's button is at its rank among them
  const legendIndex = (gi: number) => (groups[gi]?.legend ? groups.slice(0, gi).filter((g) => g.legend).length : -1);
  const syncers: (() => void)[] = [];
  const syncAll = () => { for (const sync of syncers) sync(); };
  groups.forEach((g, gi) => {
    if (!g.legend) return;
    const b = el("button", "s3-item");
    b.type = "button";
    const swatch = el("span", g.ring ? "s3-swatch ring" : "s3-swatch");
    swatch.style.setProperty("--swatch", g.colour);
    b.append(swatch, el("span", "s3-name", g.name));
    const sync = () => {
      b.setAttribute("aria-pressed", String(visibleGroup[gi]));
      b.classList.toggle("off", !visibleGroup[gi]);
    };
    sync();
    b.addEventListener("click", () => {
      visibleGroup[gi] = !visibleGroup[gi];
      if (visibleGroup[gi]) C.hidden.delete(g.name);
      else C.hidden.add(g.name);
      sync();
      draw();
    });
    // Double-click: this group alone (as Plotly's legend does); again: every group back.
    b.addEventListener("dblclick", () => {
      const legendGroups = groups.map((h, i) => (h.legend ? i : -1)).filter((i) => i >= 0);
      const alone = legendGroups.every((i) => visibleGroup[i] === (i === gi));
      for (const i of legendGroups) {
        visibleGroup[i] = alone || i === gi;
        if (visibleGroup[i]) C.hidden.delete(groups[i].name);
        else C.hidden.add(groups[i].name);
      }
      syncAll();
      draw();
    });
    syncers.push(sync);
    legend.appendChild(b);
  });
  // --- the map's display toggles (only with data.views) ---------------------------------
  const fitCaption = el("div", "s3-caption");
  if (V) {
    const bar = el("div", "s3-views");
    const onlyBox = el("label", "s3-only");
    const check = el("input");
    check.type = "checkbox";
    check.setAttribute("role", "switch");
    check.checked = only;
    onlyBox.append(check, el("span", "", V.only_label));
    const fitGroup = el("div", "s3-fit");
    fitGroup.setAttribute("role", "radiogroup");
    fitGroup.title = V.fit_help;
    const fitName = el("span", "s3-fit-name", V.fit_label);
    fitName.id = `s3-fit-${key}`;
    fitGroup.setAttribute("aria-labelledby", fitName.id);
    const fitButtons = V.fits.map((f) => {
      const b = el("button", "s3-item s3-fit-option", f.label);
      b.type = "button";
      b.setAttribute("role", "radio");
      b.dataset.fit = String(f.key);
      b.addEventListener("click", () => setFit(f.key, false));
      return b;
    });
    fitGroup.append(fitName, ...fitButtons);
    fitGroup.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" || e.key === "ArrowDown" ? 1 : e.key === "ArrowLeft" || e.key === "ArrowUp" ? -1 : 0;
      if (!step) return;
      e.preventDefault();
      const i = (fitKeys.indexOf(fitKey) + step + fitKeys.length) % fitKeys.length;
      setFit(fitKeys[i], true);
    });
    const syncViews = () => {
      fitButtons.forEach((b) => {
        const on = b.dataset.fit === String(fitKey);
        b.setAttribute("aria-checked", String(on));
        b.tabIndex = on ? 0 : -1;
      });
      check.checked = only;
      const otherButton = legend.children[legendIndex(V.other_group)] as HTMLElement | undefined;
      if (otherButton) otherButton.hidden = only;
      fitCaption.textContent = V.fits.find((f) => f.key === fitKey)?.caption ?? "";
      root.setAttribute("data-fit", String(fitKey));
      root.setAttribute("data-only", only ? "1" : "0");
    };
    const setFit = (k: number, focus: boolean) => {
      fitKey = k;
      saveKnob(V.knobs.fit, k);
      place3d();
      syncViews();
      draw();
      if (focus) fitButtons[fitKeys.indexOf(k)]?.focus();
    };
    check.addEventListener("change", () => {
      only = check.checked;
      saveKnob(V.knobs.only, only ? 1 : 0);
      syncViews();
      draw();
    });
    bar.append(onlyBox, fitGroup);
    root.insertBefore(bar, root.children[1]); // under the title
    root.appendChild(fitCaption);
    syncViews();
  }

  const tool = (text: string, label: string, act: () => void) => {
    const b = el("button", "s3-tool", text);
    b.type = "button";
    b.title = label;
    b.setAttribute("aria-label", label);
    b.addEventListener("click", act);
    tools.appendChild(b);
  };
  tool("+", L.zoom_in, () => { C.zoom = Math.min(6, C.zoom * 1.25); draw(); });
  tool("−", L.zoom_out, () => { C.zoom = Math.max(0.4, C.zoom / 1.25); draw(); });
  tool("⟲", L.reset, () => { C.yaw = HOME.yaw; C.pitch = HOME.pitch; C.zoom = HOME.zoom; draw(); });

  // --- projection ---------------------------------------------------------------------
  let width = 0;
  let height = 0;
  const ctx = canvas.getContext("2d");
  // Camera space at unit size: turn the cube about its vertical axis (yaw), then tilt it
  // towards the viewer (pitch); perspective enlarges what is near.
  const view = (x: number, y: number, z: number, yaw: number) => {
    const cy = Math.cos(yaw), sy = Math.sin(yaw), cp = Math.cos(C.pitch), sp = Math.sin(C.pitch);
    const right = x * cy - y * sy;
    const away = x * sy + y * cy;
    const up = z * cp + away * sp;
    const depth = away * cp - z * sp;
    const scale = DISTANCE / (DISTANCE + depth);
    return { right: right * scale, up: up * scale, depth, scale };
  };
  // The cube's outline over a whole turn at the current tilt: fitting that (not this yaw's
  // outline) keeps the size steady while the student turns the space; only tilting refits.
  let F = 1, OX = 0, OY = 0;
  const fit = () => {
    let l = Infinity, r = -Infinity, t = -Infinity, b = Infinity;
    for (let k = 0; k < 24; k++) {
      for (let i = 0; i < 8; i++) {
        const v = view(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1, (k / 24) * 2 * Math.PI);
        l = Math.min(l, v.right); r = Math.max(r, v.right); t = Math.max(t, v.up); b = Math.min(b, v.up);
      }
    }
    F = C.zoom * Math.max(10, Math.min((width - 2 * MARGIN_X) / (r - l), (height - 2 * MARGIN_Y) / (t - b)));
    OX = width / 2 - ((l + r) / 2) * F;
    OY = height / 2 + ((t + b) / 2) * F;
  };
  const project = (x: number, y: number, z: number): Projected => {
    const v = view(x, y, z, C.yaw);
    return { sx: OX + v.right * F, sy: OY - v.up * F, depth: v.depth, scale: v.scale };
  };

  interface Hit { sx: number; sy: number; r: number; lines: string[] }
  let hits: Hit[] = [];

  const theme = () => {
    const style = getComputedStyle(root);
    const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
    return {
      fg: read("--st-text-color", "#31333f"),
      line: read("--st-border-color", "rgba(49,51,63,0.2)"),
      bg: read("--st-background-color", "#ffffff"),
      font: read("--st-font", "\"Source Sans Pro\", \"Noto Sans CJK SC\", sans-serif"),
    };
  };
  let themeSeen = "";

  function draw(): void {
    if (!ctx || width <= 0 || height <= 0) return;
    const T = theme();
    themeSeen = T.fg + T.bg;
    fit();
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const small = data.presenter ? 15 : 11;
    const mid = data.presenter ? 17 : 13;
    hits = [];

    // The cube's edges, faint, so a turn reads as a turn.
    const corner = (i: number): [number, number, number] => [i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1];
    ctx.strokeStyle = T.line;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let i = 0; i < 8; i++) {
      for (const bit of [1, 2, 4]) {
        if (i & bit) continue;
        const a = project(...corner(i));
        const b = project(...corner(i | bit));
        ctx.moveTo(a.sx, a.sy);
        ctx.lineTo(b.sx, b.sy);
      }
    }
    ctx.stroke();

    // Labels that would overlap one already written move down (or up) by a line: two words
    // whose vectors nearly coincide (apple, banana) stay readable. Text is centred on (x, y).
    const placed: [number, number, number, number][] = [];
    const place = (text: string, x: number, y: number, size: number): [number, number] => {
      const w = ctx.measureText(text).width + 4, h = size + 2;
      const free = (cy: number) => placed.every(([px, py, pw, ph]) =>
        Math.abs(px - x) * 2 >= pw + w || Math.abs(py - cy) * 2 >= ph + h);
      let at = y;
      for (let k = 1; k <= 6 && !free(at); k++) at = y + (k % 2 ? 1 : -1) * Math.ceil(k / 2) * h;
      if (!free(at)) at = y;
      placed.push([x, at, w, h]);
      return [x, at];
    };
    const fits = (text: string, x: number, y: number, size: number): boolean => {
      const w = ctx.measureText(text).width + 4, h = size + 2;
      if (!placed.every(([px, py, pw, ph]) => Math.abs(px - x) * 2 >= pw + w || Math.abs(py - y) * 2 >= ph + h)) return false;
      placed.push([x, y, w, h]);
      return true;
    };

    // Axes along the floor's front edges (x, y) and the left-most upright edge (z), like Plotly.
    const centre = project(0, 0, 0);
    let front = 0;
    for (let i = 0; i < 4; i++) if (project(...corner(i)).depth < project(...corner(front)).depth) front = i;
    let left = 0;
    for (let i = 0; i < 4; i++) if (project(...corner(i)).sx < project(...corner(left)).sx) left = i;
    const edgeFor = [
      (t: number): [number, number, number] => [t, corner(front)[1], -1],
      (t: number): [number, number, number] => [corner(front)[0], t, -1],
      (t: number): [number, number, number] => [corner(left)[0], corner(left)[1], t],
    ];
    ctx.font = `${small}px ${T.font}`;
    ctx.fillStyle = T.fg;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let k = 0; k < 3; k++) {
      const values = ticks(axes[k].lo, axes[k].hi, 4);
      const step = values.length > 1 ? values[1] - values[0] : 1;
      const at = (v: number) => project(...edgeFor[k](toCube(v, k)));
      const out = (p: Projected, by: number): [number, number] => {
        const dx = p.sx - centre.sx, dy = p.sy - centre.sy;
        const len = Math.hypot(dx, dy) || 1;
        return [p.sx + (dx / len) * by, p.sy + (dy / len) * by];
      };
      ctx.globalAlpha = 0.8;
      for (const v of values) {
        const p = at(v);
        const [tx, ty] = out(p, 12 + small / 2);
        const label = tickText(v, step);
        if (fits(label, tx, ty, small)) ctx.fillText(label, tx, ty);  // two axes' first ticks meet at a corner
      }
      ctx.globalAlpha = 1;
      const middle = project(...edgeFor[k](0));
      const [tx, ty] = out(middle, 30 + small);
      ctx.font = `600 ${mid}px ${T.font}`;
      const half = ctx.measureText(axisTitles[k]).width / 2 + 2;
      const [ax, ay] = place(axisTitles[k], Math.max(half, Math.min(width - half, tx)), Math.max(mid, Math.min(height - mid, ty)), mid);
      ctx.fillText(axisTitles[k], ax, ay);
      ctx.font = `${small}px ${T.font}`;
    }

    // The arrows (from the origin), then the points far to near, so near ones sit on top.
    const origin = project(toCube(0, 0), toCube(0, 1), toCube(0, 2));
    for (const a of arrows) {
      const tipAt = project(toCube(a.tip[0], 0), toCube(a.tip[1], 1), toCube(a.tip[2], 2));
      const dx = tipAt.sx - origin.sx, dy = tipAt.sy - origin.sy;
      const len = Math.hypot(dx, dy);
      ctx.strokeStyle = a.colour;
      ctx.fillStyle = a.colour;
      ctx.lineWidth = data.presenter ? 5 : 4;
      ctx.beginPath();
      ctx.moveTo(origin.sx, origin.sy);
      ctx.lineTo(tipAt.sx, tipAt.sy);
      ctx.stroke();
      if (len > 1) {
        const ux = dx / len, uy = dy / len, head = Math.min(16, len * 0.4);
        ctx.beginPath();
        ctx.moveTo(tipAt.sx + ux * 2, tipAt.sy + uy * 2);
        ctx.lineTo(tipAt.sx - ux * head - uy * head * 0.45, tipAt.sy - uy * head + ux * head * 0.45);
        ctx.lineTo(tipAt.sx - ux * head + uy * head * 0.45, tipAt.sy - uy * head - ux * head * 0.45);
        ctx.closePath();
        ctx.fill();
      }
      ctx.font = `600 ${mid + 2}px ${T.font}`;
      const ux = len > 1 ? dx / len : 0, uy = len > 1 ? dy / len : -1;
      const [lx, ly] = place(a.name, tipAt.sx + ux * 18, tipAt.sy + uy * 18, mid + 2);
      ctx.fillText(a.name, lx, ly);
      hits.push({ sx: tipAt.sx, sy: tipAt.sy, r: 12,
                  lines: [a.name, `${L.vector}: [${a.tip.map(fmt).join(", ")}]`] });
    }

    const order: number[] = [];
    const projected: Projected[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const g = P.group[i];
      if (!(g >= 0 && g < groups.length) || !visibleGroup[g] || (only && g === V?.other_group)) continue;
      projected[i] = project(cube[3 * i], cube[3 * i + 1], cube[3 * i + 2]);
      order.push(i);
    }
    order.sort((a, b) => projected[b].depth - projected[a].depth);
    const labelled: number[] = [];
    for (const i of order) {
      const g = groups[P.group[i]];
      const p = projected[i];
      const r = Math.max(1, g.size * p.scale * (data.presenter ? 1.25 : 1));
      ctx.beginPath();
      ctx.arc(p.sx, p.sy, r, 0, 2 * Math.PI);
      if (g.ring) {
        ctx.strokeStyle = g.colour;
        ctx.lineWidth = 2.5;
        ctx.stroke();
        labelled.push(i);
      } else {
        ctx.fillStyle = rgba(g.colour, g.opacity);
        ctx.fill();
      }
      const name = g.name;
      const lines = g.ring
        ? [name, `${L.token}: ${P.label[i] ?? ""}`, `${L.id}: ${P.id[i] ?? ""}`]
        : [`${L.token}: ${P.label[i] ?? ""}`, `${L.id}: ${P.id[i] ?? ""}`, `${L.group}: ${name}`];
      hits.push({ sx: p.sx, sy: p.sy, r: Math.max(r + 3, 7), lines });
    }
    // The prompt's labels last: readable above every dot, each once.
    ctx.font = `600 ${mid}px ${T.font}`;
    for (const i of labelled) {
      const g = groups[P.group[i]];
      const p = projected[i];
      const r = g.size * p.scale;
      const [lx, ly] = place(P.label[i] ?? "", p.sx, p.sy - r - 3 - mid / 2, mid);
      ctx.lineWidth = 3;
      ctx.strokeStyle = T.bg;
      ctx.strokeText(P.label[i] ?? "", lx, ly);
      ctx.fillStyle = g.colour;
      ctx.fillText(P.label[i] ?? "", lx, ly);
    }
    // What is on screen, for tests and benches: points drawn and the camera.
    root.setAttribute("data-drawn", String(order.length));
    root.setAttribute("data-view", [C.yaw, C.pitch, C.zoom].map((v) => v.toFixed(3)).join(","));
  }

  // --- size ---------------------------------------------------------------------------
  const resize = () => {
    const w = Math.floor(stage.clientWidth);
    if (w <= 0) return;
    const h = Math.round(Math.min(data.height, Math.max(300, w * 1.05)));
    if (w === width && h === height) return;
    width = w;
    height = h;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    draw();
  };
  const observer = new ResizeObserver(resize);
  observer.observe(stage);
  resize();

  // --- turning, zooming, hovering --------------------------------------------------------
  let dragging: { x: number; y: number; id: number } | null = null;
  const hideTip = () => { tip.hidden = true; };
  canvas.addEventListener("pointerdown", (e) => {
    dragging = { x: e.clientX, y: e.clientY, id: e.pointerId };
    canvas.setPointerCapture(e.pointerId);
    hideTip();
  });
  const stop = (e: PointerEvent) => {
    if (dragging && dragging.id === e.pointerId) dragging = null;
  };
  canvas.addEventListener("pointerup", stop);
  canvas.addEventListener("pointercancel", stop);
  canvas.addEventListener("pointerleave", hideTip);
  canvas.addEventListener("pointermove", (e) => {
    if (dragging && dragging.id === e.pointerId) {
      C.yaw -= (e.clientX - dragging.x) * 0.01;
      C.pitch = Math.max(-1.5, Math.min(1.5, C.pitch + (e.clientY - dragging.y) * 0.01));
      dragging.x = e.clientX;
      dragging.y = e.clientY;
      draw();
      return;
    }
    const box = canvas.getBoundingClientRect();
    const x = e.clientX - box.left, y = e.clientY - box.top;
    let best: Hit | null = null;
    let bestD = Infinity;
    for (let i = hits.length - 1; i >= 0; i--) { // nearest first among those drawn on top
      const h = hits[i];
      const d = Math.hypot(h.sx - x, h.sy - y);
      if (d <= h.r && d < bestD) { best = h; bestD = d; }
    }
    if (!best) { hideTip(); return; }
    tip.replaceChildren(...best.lines.map((line, i) => el("div", i === 0 ? "s3-tip-head" : "", line)));
    tip.hidden = false;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    tip.style.left = `${Math.max(0, Math.min(width - tw, best.sx + 12))}px`;
    tip.style.top = `${Math.max(0, best.sy - th - 10 < 0 ? best.sy + 14 : best.sy - th - 10)}px`;
  });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    C.zoom = Math.max(0.4, Math.min(6, C.zoom * Math.exp(-e.deltaY * 0.0015)));
    draw();
  }, { passive: false });
  canvas.addEventListener("keydown", (e) => {
    const turn: Record<string, () => void> = {
      ArrowLeft: () => { C.yaw += 0.1; },
      ArrowRight: () => { C.yaw -= 0.1; },
      ArrowUp: () => { C.pitch = Math.min(1.5, C.pitch + 0.1); },
      ArrowDown: () => { C.pitch = Math.max(-1.5, C.pitch - 0.1); },
      "+": () => { C.zoom = Math.min(6, C.zoom * 1.25); },
      "=": () => { C.zoom = Math.min(6, C.zoom * 1.25); },
      "-": () => { C.zoom = Math.max(0.4, C.zoom / 1.25); },
      "0": () => { C.yaw = HOME.yaw; C.pitch = HOME.pitch; C.zoom = HOME.zoom; },
    };
    const act = turn[e.key];
    if (!act) return;
    e.preventDefault();
    act();
    draw();
  });

  // A theme switch restyles the page without calling us again: redraw when its colours change.
  const themeTimer = window.setInterval(() => {
    const T = theme();
    if (T.fg + T.bg !== themeSeen) draw();
  }, 700);

  return () => {
    observer.disconnect();
    window.clearInterval(themeTimer);
  };
}
