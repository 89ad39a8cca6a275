// The RoPE demonstration of the Positional-encoding page, answered in the browser: the layer and
// head (their q and k are all on the page), the query and key positions m and n, and the pairs
// drawn. Each pair of q turns by m·θ and of k by n·θ; the angle between them changes by (m − n)·θ.
// The math is lessons/positional.ts (≡ core/lessons/positional.py rope_rotate, rope_pair_picture,
// rope_scores_by_offset).

import * as bus from "./lessons/bus";
import { lineChart, Tooltip } from "./lessons/charts";
import { multiPick, select, slider } from "./lessons/controls";
import { el, richText, svg } from "./lessons/dom";
import { fill, pyExp, pyFixed, pyG } from "./lessons/format";
import { ropePairPicture, ropeScoresByOffset } from "./lessons/positional";

const PAGE = "positional_encoding";
const Q_COLOUR = "#2f6fdb", K_COLOUR = "#e8590c";
const Q_COLOUR_DARK = "#7fb0ff", K_COLOUR_DARK = "#ff9a5c";
const PANEL_PX = 210;

export interface RopeData {
  view: "rope";
  knobs: bus.LessonKnob[]; // pe_rope_layer, pe_rope_head, pe_rope_m, pe_rope_n, pe_rope_pairs
  theta: number[];
  n_ctx: number;
  // "layer,head" -> q and k before rotation (and how far our rotation is from the model's own);
  // one entry when the q and k are random (a model without RoPE) or the server picks the head.
  qk: Record<string, { q: number[]; k: number[]; diff: number | null }>;
  layers: number; // 0: no layer/head pickers here
  heads: number;
  query_positions: number[]; // three very different absolute positions, one curve
  max_pairs: number;
  max_offset: number;
  query_label: string;
  key_label: string;
  seed: number;
  labels: Record<string, string>;
  presenter: boolean;
}

const whole = (v: unknown, lo: number, hi: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi;

function panel(i: number, pic: ReturnType<typeof ropePairPicture>, subtitle: string, L: (k: string) => string,
               names: string[], tip: Tooltip, dark: boolean): HTMLElement {
  const box = el("figure", "tl-rope-panel");
  box.dataset.pair = String(i);
  box.append(el("div", "tl-chart-title", subtitle));
  const reach = Math.max(Math.hypot(...pic.q), Math.hypot(...pic.k), 1e-9) * 1.15;
  const pad = 34;
  const size = PANEL_PX;
  const X = (x: number) => pad + ((x + reach) / (2 * reach)) * size;
  const Y = (y: number) => 6 + (1 - (y + reach) / (2 * reach)) * size;
  const root = svg("svg", { width: size + pad + 6, height: size + pad + 6, role: "group", "aria-label": subtitle });
  root.classList.add("tl-svg");
  root.append(svg("line", { x1: X(-reach), x2: X(reach), y1: Y(0), y2: Y(0), class: "tl-grid" }),
              svg("line", { x1: X(0), x2: X(0), y1: Y(-reach), y2: Y(reach), class: "tl-grid" }),
              svg("rect", { x: pad, y: 6, width: size, height: size, fill: "none", class: "tl-axis" }));
  const xt = svg("text", { x: pad + size / 2, y: size + pad, "text-anchor": "middle", class: "tl-axis-title" });
  xt.textContent = L("axis_even");
  const yt = svg("text", { x: 0, y: 0, transform: `translate(12, ${6 + size / 2}) rotate(-90)`, "text-anchor": "middle", class: "tl-axis-title" });
  yt.textContent = L("axis_odd");
  root.append(xt, yt);
  const vectors: [number, number][] = [pic.q, pic.k, pic.qRotated, pic.kRotated];
  vectors.forEach(([x, y], v) => {
    const colour = v % 2 === 0 ? (dark ? Q_COLOUR_DARK : Q_COLOUR) : (dark ? K_COLOUR_DARK : K_COLOUR);
    const after = v >= 2;
    const g = svg("g", { opacity: after ? 1 : 0.5, tabindex: 0, class: "tl-arrow" });
    const line = svg("line", { x1: X(0), y1: Y(0), x2: X(x), y2: Y(y), stroke: colour, "stroke-width": 3 });
    if (!after) line.setAttribute("stroke-dasharray", "6 4");
    const angle = Math.atan2(Y(y) - Y(0), X(x) - X(0));
    const hx = X(x), hy = Y(y), s = 9;
    const head = svg("polygon", {
      points: `${hx},${hy} ${hx - s * Math.cos(angle - 0.4)},${hy - s * Math.sin(angle - 0.4)} ${hx - s * Math.cos(angle + 0.4)},${hy - s * Math.sin(angle + 0.4)}`,
      fill: colour,
    });
    const say = `${names[v]}: ${L("axis_even")} = ${pyFixed(x, 3)}, ${L("axis_odd")} = ${pyFixed(y, 3)}`;
    // role=img: a <g> with no role may not carry a name (and the panel is a group, so its
    // focusable arrows are not hidden inside one presentational picture).
    g.setAttribute("role", "img");
    g.setAttribute("aria-label", say);
    g.append(line, head);
    const show = (e: PointerEvent) => tip.show(say, e.clientX, e.clientY);
    g.addEventListener("pointermove", show);
    g.addEventListener("pointerdown", show);
    g.addEventListener("pointerleave", () => tip.hide());
    g.addEventListener("focus", () => { const b = g.getBoundingClientRect(); tip.show(say, b.right, b.top); });
    g.addEventListener("blur", () => tip.hide());
    root.append(g);
  });
  box.append(root);
  return box;
}

export function ropeView(data: RopeData, L: (k: string) => string, controls: HTMLElement, out: HTMLElement,
                         tip: Tooltip, root: HTMLElement): { redraw: () => void; follows: string[] } {
  const nPairs = data.theta.length;
  const keys = Object.keys(data.qk);
  const knobs = () => {
    const v = bus.values(PAGE);
    const layer = data.layers && whole(v.pe_rope_layer, 0, data.layers - 1) ? v.pe_rope_layer : 0;
    const head = data.heads && whole(v.pe_rope_head, 0, data.heads - 1) ? v.pe_rope_head : 0;
    const m = whole(v.pe_rope_m, 0, data.n_ctx - 1) ? v.pe_rope_m : Math.min(5, data.n_ctx - 1);
    const n = whole(v.pe_rope_n, 0, data.n_ctx - 1) ? v.pe_rope_n : Math.min(2, data.n_ctx - 1);
    const fallback = Array.from(new Set([0, Math.floor(nPairs / 4), Math.floor(nPairs / 2), nPairs - 1])).sort((a, b) => a - b).slice(0, data.max_pairs);
    const raw = v.pe_rope_pairs;
    let pairs = fallback;
    if (Array.isArray(raw) && raw.length <= data.max_pairs && raw.every((p) => whole(p, 0, 4095))) {
      const kept = (raw as number[]).filter((p) => p < nPairs);
      pairs = kept.length || raw.length === 0 ? kept.sort((a, b) => a - b) : fallback;
    }
    return { layer, head, m, n, pairs };
  };
  const k0 = knobs();
  if (data.layers > 0) {
    const range = (count: number) => Array.from({ length: count }, (_, i) => i);
    controls.append(
      select({ knob: "pe_rope_layer", label: L("layer"), options: range(data.layers), value: k0.layer, format: String,
               onChange: (v) => bus.set(PAGE, { pe_rope_layer: v }) }),
      select({ knob: "pe_rope_head", label: L("head"), options: range(data.heads), value: k0.head, format: String,
               onChange: (v) => bus.set(PAGE, { pe_rope_head: v }) }),
    );
  }
  const caption = el("p", "tl-caption");
  const sliders = el("div", "tl-controls");
  sliders.append(
    slider({ knob: "pe_rope_m", label: L("m"), min: 0, max: data.n_ctx - 1, step: 1, value: k0.m, onInput: (v) => bus.set(PAGE, { pe_rope_m: v }) }),
    slider({ knob: "pe_rope_n", label: L("n"), min: 0, max: data.n_ctx - 1, step: 1, value: k0.n, onInput: (v) => bus.set(PAGE, { pe_rope_n: v }) }),
    multiPick({ knob: "pe_rope_pairs", label: L("pairs"), options: Array.from({ length: nPairs }, (_, i) => i), chosen: k0.pairs,
                max: data.max_pairs, format: String, onChange: (v) => bus.set(PAGE, { pe_rope_pairs: v }) }),
  );
  const pictureTitle = el("div", "tl-chart-title");
  const pictures = el("div", "tl-rope-panels");
  pictures.dataset.testid = "pe-rope-panels";
  const legend = el("ul", "tl-series-legend");
  const note = el("div");
  const offsets = el("div");
  const spread = el("p", "tl-caption");
  out.append(caption, sliders, pictureTitle, pictures, legend, note, offsets, spread);
  let qkFor = "";
  const redraw = () => {
    const k = knobs();
    const dark = root.classList.contains("dark");
    const entry = data.qk[`${k.layer},${k.head}`] ?? data.qk[keys[0]];
    const qkKey = data.layers ? `${k.layer},${k.head}` : keys[0];
    if (qkKey !== qkFor) { // the caption and the offset chart depend on q and k only
      qkFor = qkKey;
      caption.textContent = entry.diff === null
        ? fill(L("random_qk"), { d_head: entry.q.length, seed: data.seed })
        : fill(L("real_qk"), { q: data.query_label, k: data.key_label, layer: k.layer, head: k.head, diff: pyExp(entry.diff, 1) });
      const maxOffset = Math.min(data.max_offset, data.n_ctx - 1);
      const queries = data.query_positions.filter((p) => p < data.n_ctx);
      const positions = queries.length ? queries : [data.n_ctx - 1];
      const scores = ropeScoresByOffset(entry.q, entry.k, data.theta, positions, maxOffset);
      const xs = Array.from({ length: maxOffset + 1 }, (_, i) => i);
      offsets.replaceChildren(lineChart({
        xs, testid: "pe-rope-offsets", title: L("offset_title"), xTitle: L("offset_axis"), yTitle: L("score"),
        legendTitle: L("series"), format: (v) => pyFixed(v, 4), height: 320,
        series: scores.map((ys, i) => ({ label: fill(L("series_label"), { m: positions[i] }), ys, colour: i,
                                         width: [4, 2.5, 1.5][i % 3], dashed: i > 0 })),
      }, tip, dark));
      let gap = 0;
      for (let d = 0; d <= maxOffset; d++) {
        const col = scores.map((row) => row[d]).filter((v) => isFinite(v));
        if (col.length) gap = Math.max(gap, Math.max(...col) - Math.min(...col));
      }
      spread.textContent = fill(L("offset_caption"), { spread: pyExp(gap, 1) });
      spread.dataset.value = String(gap);
    }
    pictureTitle.textContent = fill(L("rotation_title"), { m: k.m, n: k.n });
    const names = [L("q_before"), L("k_before"), fill(L("q_after"), { m: k.m }), fill(L("k_after"), { n: k.n })];
    pictures.replaceChildren(...k.pairs.map((i) => {
      const pic = ropePairPicture([entry.q[2 * i], entry.q[2 * i + 1]], [entry.k[2 * i], entry.k[2 * i + 1]], k.m, k.n, data.theta[i]);
      const turn = `${pyFixed((k.m - k.n) * data.theta[i] * (180 / Math.PI), 1)}°`; // math.degrees: x · (180/π)
      const node = panel(i, pic, fill(L("panel"), { i, theta: pyG(data.theta[i], 3), turn }), L, names, tip, dark);
      node.dataset.angle = String(pic.angleAfter);
      node.dataset.values = JSON.stringify([pic.qRotated, pic.kRotated]);
      return node;
    }));
    legend.replaceChildren(...names.map((name, v) => {
      const item = el("li");
      const swatch = el("span", "tl-swatch" + (v < 2 ? " dashed" : ""));
      swatch.style.borderColor = v % 2 === 0 ? (dark ? Q_COLOUR_DARK : Q_COLOUR) : (dark ? K_COLOUR_DARK : K_COLOUR);
      item.append(swatch, el("span", "", name));
      return item;
    }));
    note.replaceChildren(richText("p", "tl-text", fill(L("angle_note"), { delta: k.m - k.n })));
  };
  return { redraw, follows: ["pe_rope_layer", "pe_rope_head", "pe_rope_m", "pe_rope_n", "pe_rope_pairs"] };
}
