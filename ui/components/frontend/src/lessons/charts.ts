// Charts drawn in the browser for the lesson components: a heat map (canvas: 256 × 512 cells
// in a few milliseconds), lines and grouped bars (SVG). Each has a title, axis titles, labels,
// a legend where colour means something, a tooltip with the exact value (mouse, touch and
// keyboard: a focused chart moves its cursor with the arrow keys), a name for screen readers and,
// for small data, its numbers as a table on demand. Colours follow Streamlit's theme variables.

import { ColourScale, colourOf, colourRgb, inkOn, OKABE_ITO, OKABE_ITO_DARK } from "./colours";
import { el, svg } from "./dom";

/** The one tooltip of a component root. */
export class Tooltip {
  readonly node: HTMLDivElement;
  constructor(private root: HTMLElement) {
    this.node = el("div", "tl-tip");
    this.node.setAttribute("role", "status");
    this.node.hidden = true;
    root.append(this.node);
  }
  show(text: string, clientX: number, clientY: number): void {
    this.node.textContent = text;
    this.node.hidden = false;
    const box = this.root.getBoundingClientRect();
    const w = this.node.offsetWidth;
    let x = clientX - box.left + 12;
    if (x + w > box.width) x = Math.max(0, clientX - box.left - w - 12);
    this.node.style.left = `${x}px`;
    this.node.style.top = `${clientY - box.top + 14}px`;
  }
  hide(): void { this.node.hidden = true; }
}

export interface ChartText {
  title: string;
  xTitle: string;
  yTitle: string;
  summary?: string; // one sentence for screen readers
  tableLabel?: string; // "Show the numbers"
}

function fontPx(node: Element): number {
  const v = parseFloat(getComputedStyle(node).getPropertyValue("--fs"));
  return isFinite(v) && v > 0 ? v : 13;
}

/** Redraw `draw(width)` whenever the box's width changes (phones, the sidebar opening). */
function responsive(box: HTMLElement, draw: (width: number) => void): void {
  let last = -1;
  const run = () => {
    const w = Math.floor(box.clientWidth);
    if (w > 0 && w !== last) { last = w; draw(w); }
  };
  // The first callback comes once the box is in the page and laid out (before it is painted):
  // drawing only there never forces a layout and never draws twice.
  new ResizeObserver(run).observe(box);
}

function figure(text: ChartText, testid: string): { fig: HTMLElement; body: HTMLDivElement } {
  const fig = el("figure", "tl-chart");
  fig.dataset.testid = testid;
  const title = el("div", "tl-chart-title", text.title);
  const body = el("div", "tl-chart-body");
  fig.append(title, body);
  fig.setAttribute("aria-label", text.title);
  return { fig, body };
}

function numbersTable(label: string, header: string[], rows: () => (string | number)[][]): HTMLElement {
  const details = el("details", "tl-numbers");
  details.append(el("summary", "", label));
  // Built when opened: a closed table costs a knob move nothing.
  details.addEventListener("toggle", () => {
    if (details.open && details.childElementCount === 1) details.append(numbersBody(header, rows()));
  });
  return details;
}

function numbersBody(header: string[], rows: (string | number)[][]): HTMLElement {
  const wrap = el("div", "tl-table-wrap");
  const table = el("table", "tl-table");
  const head = el("tr");
  for (const h of header) head.append(el("th", "", h));
  table.append(head);
  for (const r of rows) {
    const tr = el("tr");
    r.forEach((c, i) => tr.append(el(i === 0 ? "th" : "td", "", String(c))));
    table.append(tr);
  }
  wrap.append(table);
  return wrap;
}

// --- heat map ---------------------------------------------------------------------------

export interface HeatOptions extends ChartText {
  values: ArrayLike<number>; // row-major, rows × cols
  rows: number;
  cols: number;
  rowLabels?: string[];
  colLabels?: string[];
  valueTitle: string;
  scale: ColourScale;
  format: (v: number) => string; // cell text (and the tooltip, unless tipFormat)
  tipFormat?: (v: number) => string; // the exact value in the tooltip
  showNumbers?: boolean; // numbers inside cells that are big enough
  cell?: number; // largest cell side in px (small matrices stay compact)
  maxHeight?: number;
  testid: string;
}

export function heatmap(opts: HeatOptions, tip: Tooltip): HTMLElement {
  const { fig, body } = figure(opts, opts.testid);
  const canvas = el("canvas", "tl-heat");
  canvas.tabIndex = 0;
  canvas.setAttribute("role", "img");
  canvas.setAttribute("aria-label", opts.summary ? `${opts.title}. ${opts.summary}` : opts.title);
  if (opts.rows * opts.cols <= 1024) canvas.dataset.values = JSON.stringify(Array.from(opts.values, (v) => (isFinite(v) ? v : String(v))));
  body.append(canvas);
  const legend = el("div", "tl-legend");
  const lo = opts.scale.symmetric ? -opts.scale.high : opts.scale.low;
  const hi = opts.scale.high;
  const bar = el("span", "tl-legend-bar");
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => colourOf(lo + (hi - lo) * t, opts.scale));
  bar.style.background = `linear-gradient(to right, ${stops.join(",")})`;
  legend.append(el("span", "tl-legend-title", opts.valueTitle), el("span", "", opts.format(lo)), bar,
                el("span", "", opts.format(hi)));
  fig.append(legend);
  const rowLabel = (r: number) => (opts.rowLabels ? opts.rowLabels[r] : String(r));
  const colLabel = (c: number) => (opts.colLabels ? opts.colLabels[c] : String(c));
  if (opts.rows * opts.cols <= 400 && opts.tableLabel) {
    const header = [`${opts.yTitle} \\ ${opts.xTitle}`, ...Array.from({ length: opts.cols }, (_, c) => colLabel(c))];
    const rows = () => Array.from({ length: opts.rows }, (_, r) =>
      [rowLabel(r), ...Array.from({ length: opts.cols }, (_, c) => opts.format(opts.values[r * opts.cols + c]))]);
    fig.append(numbersTable(opts.tableLabel, header, rows));
  }

  let geom = { left: 0, top: 0, cw: 1, ch: 1 };
  let cursor: [number, number] | null = null;
  const draw = (width: number) => {
    const fs = fontPx(fig);
    const ctx = canvas.getContext("2d");
    if (!ctx) return;
    ctx.font = `${fs}px sans-serif`;
    const fg = getComputedStyle(fig).color || "#31333f";
    const labelW = (labels: string[] | undefined, n: number) => {
      let w = 0;
      const step = labelStep(n, 1e9);
      for (let i = 0; i < n; i += step) w = Math.max(w, ctx.measureText(labels ? labels[i] : String(i)).width);
      return w;
    };
    const left = Math.ceil(fs * 1.6 + labelW(opts.rowLabels, opts.rows) + 6);
    const colW = labelW(opts.colLabels, opts.cols);
    const avail = Math.max(40, width - left - 8);
    let cw = avail / opts.cols;
    if (opts.cell) cw = Math.min(cw, opts.cell);
    const rotate = opts.colLabels !== undefined && colW + 4 > cw && cw >= fs * 0.9;
    const bottom = Math.ceil(fs * 1.8 + (rotate ? Math.min(colW, 120) : fs) + 4);
    const maxH = opts.maxHeight ?? 640;
    let ch = Math.max(1, Math.min(opts.cell ?? 40, (maxH - bottom - 6) / opts.rows));
    if (opts.cell) ch = Math.min(cw, opts.cell);
    const w = Math.ceil(left + cw * opts.cols + 8);
    const h = Math.ceil(6 + ch * opts.rows + bottom);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const top = 6;
    geom = { left, top, cw, ch };
    const big = opts.rows * opts.cols > 2000 && !opts.showNumbers;
    if (big) { // one pixel per cell, scaled up without smoothing: 131k cells in a few ms
      const image = new ImageData(opts.cols, opts.rows);
      for (let i = 0; i < opts.rows * opts.cols; i++) {
        const [r, g, b] = colourRgb(opts.values[i], opts.scale);
        image.data[4 * i] = r; image.data[4 * i + 1] = g; image.data[4 * i + 2] = b; image.data[4 * i + 3] = 255;
      }
      const pixels = document.createElement("canvas");
      pixels.width = opts.cols; pixels.height = opts.rows;
      pixels.getContext("2d")!.putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(pixels, left, top, cw * opts.cols, ch * opts.rows);
    }
    for (let r = 0; r < (big ? 0 : opts.rows); r++) {
      for (let c = 0; c < opts.cols; c++) {
        const v = opts.values[r * opts.cols + c];
        const colour = colourOf(v, opts.scale);
        ctx.fillStyle = colour;
        // whole pixels: no faint seams between neighbouring cells
        const x0 = Math.round(left + c * cw), y0 = Math.round(top + r * ch);
        ctx.fillRect(x0, y0, Math.round(left + (c + 1) * cw) - x0, Math.round(top + (r + 1) * ch) - y0);
        if (opts.showNumbers && cw >= fs * 2.4 && ch >= fs * 1.3) {
          ctx.fillStyle = inkOn(colour);
          ctx.textAlign = "center";
          ctx.textBaseline = "middle";
          ctx.fillText(opts.format(v), left + (c + 0.5) * cw, top + (r + 0.5) * ch, cw - 2);
        }
      }
    }
    ctx.fillStyle = fg;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    const rStep = labelStep(opts.rows, ch / (fs * 1.2));
    for (let r = 0; r < opts.rows; r += rStep) ctx.fillText(rowLabel(r), left - 4, top + (r + 0.5) * ch);
    const cStep = rotate ? 1 : labelStep(opts.cols, cw / (colW + 6));
    for (let c = 0; c < opts.cols; c += cStep) {
      const x = left + (c + 0.5) * cw, y = top + opts.rows * ch + 4;
      if (rotate) {
        ctx.save(); ctx.translate(x, y); ctx.rotate(-Math.PI / 2.6); ctx.textAlign = "right"; ctx.textBaseline = "middle";
        ctx.fillText(colLabel(c), 0, 0); ctx.restore();
      } else {
        ctx.textAlign = "center"; ctx.textBaseline = "top"; ctx.fillText(colLabel(c), x, y);
      }
    }
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    ctx.fillText(opts.xTitle, left + (cw * opts.cols) / 2, h - 2);
    ctx.save(); ctx.translate(fs * 0.9, top + (ch * opts.rows) / 2); ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = "middle"; ctx.fillText(opts.yTitle, 0, 0); ctx.restore();
    if (cursor) {
      ctx.strokeStyle = fg; ctx.lineWidth = 2;
      ctx.strokeRect(left + cursor[1] * cw, top + cursor[0] * ch, Math.max(cw, 2), Math.max(ch, 2));
    }
  };
  const text = (r: number, c: number) =>
    `${opts.yTitle} ${rowLabel(r)} · ${opts.xTitle} ${colLabel(c)}: ${opts.valueTitle} = ${(opts.tipFormat ?? opts.format)(opts.values[r * opts.cols + c])}`;
  const at = (e: PointerEvent | MouseEvent): [number, number] | null => {
    const b = canvas.getBoundingClientRect();
    const c = Math.floor((e.clientX - b.left - geom.left) / geom.cw);
    const r = Math.floor((e.clientY - b.top - geom.top) / geom.ch);
    return r >= 0 && r < opts.rows && c >= 0 && c < opts.cols ? [r, c] : null;
  };
  const onPoint = (e: PointerEvent) => {
    const cell = at(e);
    if (!cell) { tip.hide(); return; }
    canvas.dataset.cell = `${cell[0]},${cell[1]}`;
    tip.show(text(cell[0], cell[1]), e.clientX, e.clientY);
  };
  canvas.addEventListener("pointermove", onPoint);
  canvas.addEventListener("pointerdown", onPoint);
  canvas.addEventListener("pointerleave", () => tip.hide());
  canvas.addEventListener("blur", () => { cursor = null; tip.hide(); draw(Math.floor(body.clientWidth) || 600); });
  canvas.addEventListener("keydown", (e) => {
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const m = moves[e.key];
    if (!m) return;
    e.preventDefault();
    const [r0, c0] = cursor ?? [0, 0];
    cursor = cursor ? [Math.min(Math.max(r0 + m[0], 0), opts.rows - 1), Math.min(Math.max(c0 + m[1], 0), opts.cols - 1)] : [0, 0];
    draw(Math.floor(body.clientWidth) || 600);
    const b = canvas.getBoundingClientRect();
    tip.show(text(cursor[0], cursor[1]), b.left + geom.left + (cursor[1] + 1) * geom.cw, b.top + geom.top + cursor[0] * geom.ch);
  });
  responsive(body, draw);
  return fig;
}

function labelStep(n: number, fit: number): number {
  if (fit >= 1) return 1;
  const raw = Math.ceil(1 / Math.max(fit, 1e-6));
  for (const s of [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128]) if (s >= raw) return s;
  return Math.ceil(raw / 100) * 100;
}

// --- lines ------------------------------------------------------------------------------

export interface Series { label: string; ys: number[]; dashed?: boolean; colour?: number; extra?: string; width?: number }

export interface LineOptions extends ChartText {
  xs: number[];
  series: Series[];
  legendTitle: string;
  format: (v: number) => string;
  height?: number;
  yDomain?: [number, number];
  marker?: number; // an x to mark with a rule
  testid: string;
}

function niceTicks(lo: number, hi: number, count: number): number[] {
  if (!(hi > lo)) return [lo];
  const step0 = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= step0) ?? step0;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

function tickText(v: number): string {
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(0).replace("-", "−");
  return String(Number(v.toPrecision(6))).replace("-", "−");
}

export function lineChart(opts: LineOptions, tip: Tooltip, dark: boolean): HTMLElement {
  const { fig, body } = figure(opts, opts.testid);
  const palette = dark ? OKABE_ITO_DARK : OKABE_ITO;
  const legend = el("ul", "tl-series-legend");
  legend.setAttribute("aria-label", opts.legendTitle);
  opts.series.forEach((s, i) => {
    const item = el("li");
    const swatch = el("span", "tl-swatch" + (s.dashed ? " dashed" : ""));
    swatch.style.borderColor = palette[(s.colour ?? i) % palette.length];
    item.append(swatch, el("span", "", s.label + (s.extra ? ` · ${s.extra}` : "")));
    legend.append(item);
  });
  let finite = opts.series.flatMap((s) => s.ys.filter((y) => isFinite(y)));
  if (!finite.length) finite = [0, 1];
  const [ylo, yhi] = opts.yDomain ?? [Math.min(...finite), Math.max(...finite)];
  const xlo = opts.xs[0], xhi = opts.xs[opts.xs.length - 1];
  let index = -1;
  let drawn: SVGSVGElement | null = null;
  let geom = { left: 0, plotW: 1 };
  const draw = (width: number) => {
    const fs = fontPx(fig);
    const h = opts.height ?? Math.round(Math.min(340, Math.max(220, width * 0.45)));
    const left = fs * 4.2, right = 10, top = 8, bottom = fs * 3.2;
    const plotW = Math.max(40, width - left - right), plotH = h - top - bottom;
    geom = { left, plotW };
    const X = (x: number) => left + (xhi > xlo ? ((x - xlo) / (xhi - xlo)) * plotW : plotW / 2);
    const pad = (yhi - ylo) * 0.05 || 1;
    const lo = opts.yDomain ? ylo : ylo - pad, hi = opts.yDomain ? yhi : yhi + pad;
    const Y = (y: number) => top + (1 - (y - lo) / (hi - lo)) * plotH;
    const root = svg("svg", { width, height: h, role: "img", "aria-label": opts.summary ? `${opts.title}. ${opts.summary}` : opts.title, tabindex: 0 });
    root.classList.add("tl-svg");
    for (const t of niceTicks(lo, hi, 5)) {
      root.append(svg("line", { x1: left, x2: left + plotW, y1: Y(t), y2: Y(t), class: "tl-grid" }));
      const label = svg("text", { x: left - 4, y: Y(t), "text-anchor": "end", "dominant-baseline": "middle", class: "tl-tick" });
      label.textContent = tickText(t);
      root.append(label);
    }
    for (const t of niceTicks(xlo, xhi, Math.max(2, Math.floor(plotW / (fs * 5))))) {
      const label = svg("text", { x: X(t), y: top + plotH + fs * 1.2, "text-anchor": "middle", class: "tl-tick" });
      label.textContent = tickText(t);
      root.append(label, svg("line", { x1: X(t), x2: X(t), y1: top + plotH, y2: top + plotH + 4, class: "tl-axis" }));
    }
    root.append(svg("line", { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, class: "tl-axis" }),
                svg("line", { x1: left, x2: left, y1: top, y2: top + plotH, class: "tl-axis" }));
    const xt = svg("text", { x: left + plotW / 2, y: h - 4, "text-anchor": "middle", class: "tl-axis-title" });
    xt.textContent = opts.xTitle;
    const yt = svg("text", { x: 0, y: 0, transform: `translate(${fs}, ${top + plotH / 2}) rotate(-90)`, "text-anchor": "middle", class: "tl-axis-title" });
    yt.textContent = opts.yTitle;
    root.append(xt, yt);
    if (opts.marker !== undefined) root.append(svg("line", { x1: X(opts.marker), x2: X(opts.marker), y1: top, y2: top + plotH, class: "tl-marker" }));
    opts.series.forEach((s, i) => {
      let d = "";
      let pen = false;
      s.ys.forEach((y, j) => {
        if (!isFinite(y)) { pen = false; return; }
        d += `${pen ? "L" : "M"}${X(opts.xs[j]).toFixed(1)},${Y(y).toFixed(1)}`;
        pen = true;
      });
      const path = svg("path", { d, fill: "none", stroke: palette[(s.colour ?? i) % palette.length], "stroke-width": s.width ?? 2 });
      if (s.dashed) path.setAttribute("stroke-dasharray", "6 4");
      root.append(path);
    });
    const rule = svg("line", { x1: 0, x2: 0, y1: top, y2: top + plotH, class: "tl-rule" });
    rule.style.display = "none";
    root.append(rule);
    const show = (i: number, cx: number, cy: number) => {
      index = i;
      rule.setAttribute("x1", String(X(opts.xs[i]))); rule.setAttribute("x2", String(X(opts.xs[i])));
      rule.style.display = "";
      const lines = opts.series.map((s) => `${s.label}: ${isFinite(s.ys[i]) ? opts.format(s.ys[i]) : "—"}`);
      tip.show(`${opts.xTitle} = ${opts.xs[i]}\n${lines.join("\n")}`, cx, cy);
    };
    const nearest = (clientX: number) => {
      const b = root.getBoundingClientRect();
      const x = xlo + ((clientX - b.left - geom.left) / geom.plotW) * (xhi - xlo);
      let best = 0;
      opts.xs.forEach((v, i) => { if (Math.abs(v - x) < Math.abs(opts.xs[best] - x)) best = i; });
      return best;
    };
    const onPoint = (e: PointerEvent) => show(nearest(e.clientX), e.clientX, e.clientY);
    root.addEventListener("pointermove", onPoint);
    root.addEventListener("pointerdown", onPoint);
    root.addEventListener("pointerleave", () => { tip.hide(); rule.style.display = "none"; });
    root.addEventListener("blur", () => { tip.hide(); rule.style.display = "none"; });
    root.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
      e.preventDefault();
      const i = Math.min(Math.max(index + (e.key === "ArrowRight" ? 1 : -1), 0), opts.xs.length - 1);
      const b = root.getBoundingClientRect();
      show(i, b.left + X(opts.xs[i]), b.top + top);
    });
    if (drawn) drawn.replaceWith(root); else body.append(root);
    drawn = root;
  };
  fig.append(legend);
  responsive(body, draw);
  return fig;
}

// --- grouped bars -----------------------------------------------------------------------

export interface BarOptions extends ChartText {
  categories: string[];
  groups: { label: string; values: (number | null)[] }[];
  legendTitle: string;
  format: (v: number) => string;
  yDomain?: [number, number];
  testid: string;
}

export function groupedBars(opts: BarOptions, tip: Tooltip, dark: boolean): HTMLElement {
  const { fig, body } = figure(opts, opts.testid);
  const palette = dark ? OKABE_ITO_DARK : OKABE_ITO;
  const legend = el("ul", "tl-series-legend");
  legend.setAttribute("aria-label", opts.legendTitle);
  opts.groups.forEach((g, i) => {
    const item = el("li");
    const swatch = el("span", "tl-swatch block");
    swatch.style.background = palette[i % palette.length];
    item.append(swatch, el("span", "", g.label));
    legend.append(item);
  });
  const values = opts.groups.flatMap((g) => g.values.filter((v): v is number => v !== null && isFinite(v)));
  const lo = opts.yDomain ? opts.yDomain[0] : Math.min(0, ...values);
  const hi = opts.yDomain ? opts.yDomain[1] : Math.max(1, ...values);
  let drawn: SVGSVGElement | null = null;
  const draw = (width: number) => {
    const fs = fontPx(fig);
    const h = Math.round(Math.min(320, Math.max(220, width * 0.45)));
    const left = fs * 4, right = 8, top = 8, bottom = fs * 3.4;
    const plotW = Math.max(40, width - left - right), plotH = h - top - bottom;
    const Y = (y: number) => top + (1 - (y - lo) / (hi - lo || 1)) * plotH;
    const band = plotW / Math.max(1, opts.categories.length);
    const barW = (band * 0.8) / opts.groups.length;
    // A group, not an img: an img's parts are presentational, and each bar is a focusable
    // picture of its own (role=img) that names its value.
    const root = svg("svg", { width, height: h, role: "group", "aria-label": opts.summary ? `${opts.title}. ${opts.summary}` : opts.title });
    root.classList.add("tl-svg");
    for (const t of niceTicks(lo, hi, 5)) {
      root.append(svg("line", { x1: left, x2: left + plotW, y1: Y(t), y2: Y(t), class: "tl-grid" }));
      const label = svg("text", { x: left - 4, y: Y(t), "text-anchor": "end", "dominant-baseline": "middle", class: "tl-tick" });
      label.textContent = tickText(t);
      root.append(label);
    }
    opts.categories.forEach((cat, c) => {
      const label = svg("text", { x: left + (c + 0.5) * band, y: top + plotH + fs * 1.2, "text-anchor": "middle", class: "tl-tick" });
      label.textContent = cat;
      root.append(label);
      opts.groups.forEach((g, gi) => {
        const v = g.values[c];
        if (v === null || !isFinite(v)) return;
        const y0 = Y(Math.max(lo, Math.min(0, hi))), y1 = Y(v);
        const rect = svg("rect", {
          x: left + c * band + band * 0.1 + gi * barW, y: Math.min(y0, y1), width: Math.max(1, barW - 2),
          height: Math.max(1, Math.abs(y1 - y0)), fill: palette[gi % palette.length], class: "tl-bar", tabindex: 0,
          "data-value": String(v),
        });
        const say = `${cat} · ${g.label}: ${opts.format(v)}`;
        rect.setAttribute("role", "img"); // a <rect> with no role may not carry a name
        rect.setAttribute("aria-label", say);
        const onPoint = (e: PointerEvent) => tip.show(say, e.clientX, e.clientY);
        rect.addEventListener("pointermove", onPoint);
        rect.addEventListener("pointerdown", onPoint);
        rect.addEventListener("pointerleave", () => tip.hide());
        rect.addEventListener("focus", () => { const b = rect.getBoundingClientRect(); tip.show(say, b.right, b.top); });
        rect.addEventListener("blur", () => tip.hide());
        root.append(rect);
      });
    });
    root.append(svg("line", { x1: left, x2: left + plotW, y1: Y(Math.max(lo, Math.min(0, hi))), y2: Y(Math.max(lo, Math.min(0, hi))), class: "tl-axis" }),
                svg("line", { x1: left, x2: left, y1: top, y2: top + plotH, class: "tl-axis" }));
    const xt = svg("text", { x: left + plotW / 2, y: h - 4, "text-anchor": "middle", class: "tl-axis-title" });
    xt.textContent = opts.xTitle;
    const yt = svg("text", { x: 0, y: 0, transform: `translate(${fs}, ${top + plotH / 2}) rotate(-90)`, "text-anchor": "middle", class: "tl-axis-title" });
    yt.textContent = opts.yTitle;
    root.append(xt, yt);
    if (drawn) drawn.replaceWith(root); else body.append(root);
    drawn = root;
  };
  fig.append(legend);
  responsive(body, draw);
  return fig;
}

/** A plain table (the pages' Markdown tables): header, rows; cells may carry a data-value. */
export function table(header: string[], rows: { cells: string[]; values?: (number | null)[] }[], cls = "",
                      scroll = false): HTMLElement {
  const t = el("table", "tl-table " + cls);
  const head = el("tr");
  for (const h of header) head.append(el("th", "", h));
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  for (const r of rows) {
    const tr = el("tr");
    r.cells.forEach((c, i) => {
      const td = el("td", "", c);
      const v = r.values?.[i];
      if (v !== undefined && v !== null) td.dataset.value = String(v);
      tr.append(td);
    });
    tbody.append(tr);
  }
  t.append(thead, tbody);
  const wrap = el("div", "tl-table-wrap" + (scroll ? " scroll" : ""));
  if (scroll) wrap.tabIndex = 0; // scrollable by keyboard
  wrap.append(t);
  return wrap;
}
