// The calculators' charts, drawn in the browser as SVG (the Vega charts they replace showed the
// same): one stacked bar of shares (where the parameters sit), horizontal bars with their value
// written on (MHA / GQA / MQA), and lines on log–log axes (the cache against the context). Each
// has a title, axis titles, a legend where colour means something (with a dash or a label too:
// never colour alone), a tooltip with the exact value (mouse, touch, keyboard focus) and a name
// for screen readers. Every text goes in as textContent.

import { Tooltip } from "../lessons/charts";
import { el, svg } from "../lessons/dom";

function fontPx(node: Element): number {
  const v = parseFloat(getComputedStyle(node).getPropertyValue("--fs"));
  return isFinite(v) && v > 0 ? v : 13;
}

function figure(title: string, testid: string): { fig: HTMLElement; body: HTMLDivElement } {
  const fig = el("figure", "tl-chart");
  fig.dataset.testid = testid;
  const body = el("div", "tl-chart-body");
  fig.append(el("div", "tl-chart-title", title), body);
  fig.setAttribute("aria-label", title);
  return { fig, body };
}

/** Draw at the box's width, again whenever it changes (a phone turned, the sidebar opened). */
function responsive(box: HTMLElement, draw: (width: number) => SVGSVGElement): void {
  let last = -1;
  let drawn: SVGSVGElement | null = null;
  new ResizeObserver(() => {
    const w = Math.floor(box.clientWidth);
    if (w <= 0 || w === last) return;
    last = w;
    const next = draw(w);
    if (drawn) drawn.replaceWith(next); else box.append(next);
    drawn = next;
  }).observe(box);
}

function text(x: number, y: number, content: string, cls: string, attrs: Record<string, string | number> = {}): SVGTextElement {
  const node = svg("text", { x, y, class: cls, ...attrs });
  node.textContent = content;
  return node;
}

/** A mark that names itself and shows its tooltip on pointer and focus. */
function pointable(node: SVGElement, say: string, tip: Tooltip, focusable = true): void {
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", say);
  if (focusable) node.setAttribute("tabindex", "0");
  const onPoint = (e: PointerEvent) => tip.show(say, e.clientX, e.clientY);
  node.addEventListener("pointermove", onPoint);
  node.addEventListener("pointerdown", onPoint);
  node.addEventListener("pointerleave", () => tip.hide());
  node.addEventListener("focus", () => { const b = node.getBoundingClientRect(); tip.show(say, b.right, b.top); });
  node.addEventListener("blur", () => tip.hide());
}

function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
}

/** A tick's text, short (1.2e9 -> "1.2G", 3000 -> "3k"), as Vega's "~s" format writes it. */
export function si(v: number): string {
  const a = Math.abs(v);
  for (const [unit, size] of [["P", 1e15], ["T", 1e12], ["G", 1e9], ["M", 1e6], ["k", 1e3]] as [string, number][]) {
    if (a >= size) return `${Number((v / size).toPrecision(3))}${unit}`;
  }
  if (a > 0 && a < 0.01) return v.toExponential(0);
  return String(Number(v.toPrecision(3)));
}

// --- one stacked bar ---------------------------------------------------------------------

export interface SharePart { label: string; value: number; say: string; colour: string }

// Each part of a stacked bar carries a mark as well as its colour (the same mark in the legend).
const PART_MARKS = ["①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧"];

export function stackedBar(o: { parts: SharePart[]; title: string; xTitle: string; barLabel: string; legendTitle: string;
                                testid: string }, tip: Tooltip): HTMLElement {
  const { fig, body } = figure(o.title, o.testid);
  const total = o.parts.reduce((s, p) => s + p.value, 0) || 1;
  responsive(body, (width) => {
    const fs = fontPx(fig);
    const left = Math.min(width * 0.3, fs * 8), right = 12, top = 6, barH = fs * 2.6, bottom = fs * 3.4;
    const plotW = Math.max(40, width - left - right), h = top + barH + bottom;
    const root = svg("svg", { width, height: h, role: "group", "aria-label": o.title });
    root.classList.add("tl-svg");
    const X = (v: number) => left + (v / total) * plotW;
    const step = niceStep(total, Math.max(2, Math.floor(plotW / (fs * 5))));
    for (let v = 0; v <= total * (1 + 1e-9); v += step) {
      root.append(svg("line", { x1: X(v), x2: X(v), y1: top, y2: top + barH + 4, class: "tl-grid" }),
                  text(X(v), top + barH + fs * 1.3, si(v), "tl-tick", { "text-anchor": "middle" }));
    }
    root.append(text(left - 6, top + barH / 2, o.barLabel, "tl-tick", { "text-anchor": "end", "dominant-baseline": "middle" }));
    let at = 0;
    o.parts.forEach((p, i) => {
      const w = Math.max(0.5, X(at + p.value) - X(at));
      const rect = svg("rect", { x: X(at), y: top, width: w, height: barH, fill: p.colour, class: "tl-bar" });
      pointable(rect, p.say, tip);
      root.append(rect);
      if (w >= fs * 1.6) {  // never colour alone: the part's mark, as in the legend, where it fits
        const mark = text(X(at) + w / 2, top + barH / 2, PART_MARKS[i % PART_MARKS.length], "tl-part-mark",
                          { "text-anchor": "middle", "dominant-baseline": "central", "aria-hidden": "true" });
        root.append(mark);
      }
      at += p.value;
    });
    root.append(text(left + plotW / 2, h - 4, o.xTitle, "tl-axis-title", { "text-anchor": "middle" }));
    return root;
  });
  const legend = el("ul", "tl-series-legend");
  legend.setAttribute("aria-label", o.legendTitle);
  o.parts.forEach((p, i) => {
    const item = el("li");
    const swatch = el("span", "tl-swatch block");
    swatch.style.background = p.colour;
    item.append(swatch, el("span", "", `${PART_MARKS[i % PART_MARKS.length]} ${p.label}`));
    legend.append(item);
  });
  fig.append(legend);
  return fig;
}

// --- horizontal bars with their values written on ---------------------------------------

export interface Bar { label: string; value: number; shown: string; say: string; colour: string }

export function horizontalBars(o: { bars: Bar[]; title: string; xTitle: string; yTitle: string; testid: string },
                               tip: Tooltip): HTMLElement {
  const { fig, body } = figure(o.title, o.testid);
  const high = Math.max(1e-12, ...o.bars.map((b) => b.value)) * 1.3; // room for the written value
  responsive(body, (width) => {
    const fs = fontPx(fig);
    const longest = Math.max(...o.bars.map((b) => b.label.length));
    const left = Math.min(width * 0.42, fs * (1.6 + 0.62 * longest)), right = 8, top = 6, row = fs * 2.4, bottom = fs * 3.4;
    const plotW = Math.max(40, width - left - right), plotH = row * o.bars.length, h = top + plotH + bottom;
    const root = svg("svg", { width, height: h, role: "group", "aria-label": o.title });
    root.classList.add("tl-svg");
    const X = (v: number) => left + (v / high) * plotW;
    const step = niceStep(high, Math.max(2, Math.floor(plotW / (fs * 5))));
    for (let v = 0; v <= high * (1 + 1e-9); v += step) {
      root.append(svg("line", { x1: X(v), x2: X(v), y1: top, y2: top + plotH, class: "tl-grid" }),
                  text(X(v), top + plotH + fs * 1.3, si(v), "tl-tick", { "text-anchor": "middle" }));
    }
    o.bars.forEach((b, i) => {
      const y = top + i * row;
      root.append(text(left - 6, y + row / 2, b.label, "tl-tick", { "text-anchor": "end", "dominant-baseline": "middle" }));
      const rect = svg("rect", { x: left, y: y + row * 0.15, width: Math.max(1, X(b.value) - left), height: row * 0.7,
                                 fill: b.colour, class: "tl-bar", "data-value": String(b.value) });
      pointable(rect, b.say, tip);
      root.append(rect, text(X(b.value) + 4, y + row / 2, b.shown, "tl-tick", { "dominant-baseline": "middle" }));
    });
    root.append(svg("line", { x1: left, x2: left, y1: top, y2: top + plotH, class: "tl-axis" }),
                text(left + plotW / 2, h - 4, o.xTitle, "tl-axis-title", { "text-anchor": "middle" }),
                text(0, 0, o.yTitle, "tl-axis-title", { transform: `translate(${fs}, ${top + plotH / 2}) rotate(-90)`,
                                                         "text-anchor": "middle" }));
    return root;
  });
  return fig;
}

// --- lines on log–log axes -----------------------------------------------------------------

export interface LogSeries { label: string; ys: number[]; shown: string[]; colour: string; dash: string }

function decades(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(Math.pow(10, e));
  return out;
}

export function logLogLines(o: { xs: number[]; series: LogSeries[]; title: string; xTitle: string; yTitle: string;
                                 legendTitle: string; xShown: (x: number) => string; testid: string }, tip: Tooltip): HTMLElement {
  const { fig, body } = figure(o.title, o.testid);
  const ys = o.series.flatMap((s) => s.ys).filter((y) => y > 0 && isFinite(y));
  const [ylo, yhi] = ys.length ? [Math.min(...ys), Math.max(...ys)] : [1, 10];
  const [xlo, xhi] = [Math.min(...o.xs), Math.max(...o.xs)];
  const lx = (x: number) => Math.log10(x);
  responsive(body, (width) => {
    const fs = fontPx(fig);
    const h = 300, left = fs * 4.2, right = 12, top = 8, bottom = fs * 3.2;
    const plotW = Math.max(40, width - left - right), plotH = h - top - bottom;
    const padY = (lx(yhi) - lx(ylo)) * 0.06 || 0.5, padX = (lx(xhi) - lx(xlo)) * 0.02 || 0.5;
    const [y0, y1] = [lx(ylo) - padY, lx(yhi) + padY], [x0, x1] = [lx(xlo) - padX, lx(xhi) + padX];
    const X = (x: number) => left + ((lx(x) - x0) / (x1 - x0)) * plotW;
    const Y = (y: number) => top + (1 - (lx(y) - y0) / (y1 - y0)) * plotH;
    const root = svg("svg", { width, height: h, role: "group", "aria-label": o.title });
    root.classList.add("tl-svg");
    for (const t of decades(Math.pow(10, y0), Math.pow(10, y1))) {
      if (lx(t) < y0 || lx(t) > y1) continue;
      root.append(svg("line", { x1: left, x2: left + plotW, y1: Y(t), y2: Y(t), class: "tl-grid" }),
                  text(left - 4, Y(t), si(t), "tl-tick", { "text-anchor": "end", "dominant-baseline": "middle" }));
    }
    for (const t of o.xs) {
      root.append(svg("line", { x1: X(t), x2: X(t), y1: top + plotH, y2: top + plotH + 4, class: "tl-axis" }));
    }
    const every = Math.max(1, Math.ceil((o.xs.length * fs * 3.2) / plotW));
    o.xs.forEach((t, i) => { if (i % every === 0) root.append(text(X(t), top + plotH + fs * 1.3, si(t), "tl-tick", { "text-anchor": "middle" })); });
    root.append(svg("line", { x1: left, x2: left + plotW, y1: top + plotH, y2: top + plotH, class: "tl-axis" }),
                svg("line", { x1: left, x2: left, y1: top, y2: top + plotH, class: "tl-axis" }),
                text(left + plotW / 2, h - 4, o.xTitle, "tl-axis-title", { "text-anchor": "middle" }),
                text(0, 0, o.yTitle, "tl-axis-title", { transform: `translate(${fs}, ${top + plotH / 2}) rotate(-90)`,
                                                         "text-anchor": "middle" }));
    for (const s of o.series) {
      const d = s.ys.map((y, j) => `${j ? "L" : "M"}${X(o.xs[j]).toFixed(1)},${Y(y).toFixed(1)}`).join("");
      const path = svg("path", { d, fill: "none", stroke: s.colour, "stroke-width": 2 });
      if (s.dash) path.setAttribute("stroke-dasharray", s.dash);
      root.append(path);
      s.ys.forEach((y, j) => {
        const dot = svg("circle", { cx: X(o.xs[j]), cy: Y(y), r: 4, fill: s.colour, class: "tl-bar" });
        // Pointer only: 27 Tab stops would bury the page; the numbers are in the table on demand.
        pointable(dot, `${s.label} · ${o.xTitle} ${o.xShown(o.xs[j])}: ${s.shown[j]}`, tip, false);
        root.append(dot);
      });
    }
    return root;
  });
  const legend = el("ul", "tl-series-legend");
  legend.setAttribute("aria-label", o.legendTitle);
  for (const s of o.series) {
    const item = el("li");
    const swatch = el("span", "tl-swatch" + (s.dash ? " dashed" : ""));
    swatch.style.borderColor = s.colour;
    item.append(swatch, el("span", "", s.label));
    legend.append(item);
  }
  fig.append(legend);
  return fig;
}
