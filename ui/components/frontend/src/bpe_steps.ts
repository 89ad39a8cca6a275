// The Tokenization page's BPE steps: a Streamlit components-v2 module. Python sends one
// recorded training once (the merges with their evidence, the most frequent words' starting
// symbols, the corpus token curve); moving the step (slider, buttons, Play, arrow keys) replays
// the merges here (bpe_replay.ts, the same steps as core.text.tokenizer) and redraws the words,
// the headline, the pair counts, the merges so far, the vocabulary and the "from N tokens to
// M" line, with no message to the server. Two mounts share the step: "steps" and "encode"
// (the encode box's word split, below the server's text box).

import { MergeRecord, replay, vocabSizes } from "./bpe_replay";
import { codeSpan, el, fill, rich, svg, tokenColour, watchTheme } from "./dom";
import { KnobSpec, restoreKnob, saveKnob } from "./knob_state";

interface Merge extends MergeRecord {
  count: number;
  n_tied: number;
  ties: [string, string][];
  pairs: [string, string, number, string][]; // left, right, count, status ("chosen" | "tie" | "")
}
interface Data {
  part: "steps" | "encode";
  knob: KnobSpec & { scope: string }; // scope: the corpus (a new one starts from the server's step)
  merges: Merge[];
  words: [string, number, string[]][]; // shown word, frequency, starting symbols
  distinct: number;
  encode: [string, string[]][]; // word, starting symbols
  base: string[]; // base vocabulary in id order (specials, bytes, characters)
  special: string[];
  bytes: string[];
  ids: Record<string, number>;
  show: Record<string, string>; // raw symbol -> visible form (display_token), where they differ
  curve: number[]; // corpus tokens after 0..last merges
  total_words: number;
  labels: Record<string, string>;
  presenter: boolean;
  play_ms: number;
}
interface Component {
  data: Data;
  key: string;
  parentElement: HTMLElement | ShadowRoot;
}

const playing = new Map<string, number>(); // knob name -> interval id
// The corpus each knob was last shown for, in this document: a new corpus starts from the
// server's step (0 after a preset or an edit) however far the browser had moved.
const scopes = new Map<string, string>();
// Two mounts show one step (the steps and the encode box's split): a move in one redraws the other.
const listeners = new Set<(step: number) => void>();

/** The step to show now: knob_state's rules, a new corpus's server step, fitted to the training. */
function startStep(knob: KnobSpec & { scope: string }, last: number): number {
  const restored = restoreKnob(knob); // records the server's value as the one this browser saw
  let step = scopes.get(knob.name) === knob.scope ? restored : knob.value;
  scopes.set(knob.name, knob.scope);
  if (!Number.isInteger(step)) step = knob.value;
  step = Math.max(0, Math.min(last, step));
  saveKnob(knob, step); // recorded for this page's address bar (and fitted, if it was not)
  return step;
}

export default function mount(component: Component): () => void {
  const { data, parentElement } = component;
  const L = (name: string) => data.labels[name] ?? name;
  const last = data.merges.length;
  const knob = data.knob;
  const show = (raw: string) => data.show[raw] ?? raw;
  const idOf = (raw: string) => (raw in data.ids ? String(data.ids[raw]) : "—");
  const sizes = vocabSizes(data.base, data.merges.map((m) => m.new));

  for (const old of Array.from(parentElement.children)) if (old.classList.contains("bpe")) old.remove();
  const root = el("div", "bpe");
  root.setAttribute("data-testid", `bpe-${data.part}`);
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);

  let step = startStep(knob, last);
  const stops: (() => void)[] = [];

  // --- the encode box's split (the second mount) ------------------------------------------
  if (data.part === "encode") {
    const draw = () => drawEncode(root, data, step, L, show, idOf);
    draw();
    const follow = (v: number) => { step = Math.max(0, Math.min(last, v)); draw(); };
    listeners.add(follow);
    stops.push(() => listeners.delete(follow));
    return () => { for (const stop of stops) stop(); };
  }

  // --- controls -------------------------------------------------------------------------
  const controls = el("div", "bpe-controls");
  const button = (text: string, label: string, cls = "bpe-btn") => {
    const b = el("button", cls, text);
    b.type = "button";
    b.dataset.act = ["first", "back", "play", "forward", "last"][controls.children.length];
    if (label) { b.title = label; b.setAttribute("aria-label", label); }
    controls.appendChild(b);
    return b;
  };
  const first = button("|◀", L("first"));
  const back = button("◀", L("back"));
  const play = button(L("play"), "", "bpe-btn bpe-play");
  const forward = button("▶", L("forward"));
  const toEnd = button("▶|", L("last"));
  const slider = el("input", "bpe-slider");
  slider.type = "range";
  slider.min = "0";
  slider.max = String(last);
  slider.step = "1";
  slider.setAttribute("aria-label", L("slider"));
  const out = el("output", "bpe-out");
  controls.append(slider, out);
  root.appendChild(controls);
  if (last === 0) controls.hidden = true;

  const head = el("div", "bpe-head");
  head.setAttribute("aria-live", "polite");
  const ties = el("div", "bpe-caption");
  root.append(head, ties);
  const grid1 = el("div", "bpe-grid bpe-grid-wide");
  const chipsBox = el("section", "bpe-box");
  const pairsBox = el("section", "bpe-box");
  grid1.append(chipsBox, pairsBox);
  const grid2 = el("div", "bpe-grid");
  const listBox = el("section", "bpe-box");
  const vocabBox = el("section", "bpe-box");
  grid2.append(listBox, vocabBox);
  const curveBox = el("section", "bpe-box bpe-curve");
  const curveCaption = el("p", "bpe-caption bpe-curve-caption");
  root.append(grid1, grid2, curveBox, curveCaption);

  const moveCurve = drawCurve(curveBox, data, step, sizes, L); // the line once; a step moves its marker

  const isPlaying = () => playing.has(knob.name);
  const stopPlay = () => {
    const timer = playing.get(knob.name);
    if (timer !== undefined) window.clearInterval(timer);
    playing.delete(knob.name);
  };

  function setStep(value: number): void {
    const next = Math.max(0, Math.min(last, Math.round(value)));
    if (next === step) return;
    step = next;
    saveKnob(knob, step);
    for (const fn of Array.from(listeners)) fn(step);
    draw();
  }

  function draw(): void {
    const t0 = performance.now();
    slider.value = String(step);
    slider.setAttribute("aria-valuetext", fill(L("valuetext"), { n: step, last }));
    out.textContent = `${step} / ${last}`;
    first.disabled = back.disabled = step === 0;
    forward.disabled = toEnd.disabled = step >= last;
    play.textContent = isPlaying() ? L("pause") : L("play");
    play.setAttribute("aria-pressed", String(isPlaying()));
    drawHead(head, ties, data, step, L, show);
    drawChips(chipsBox, data, step, L, show, idOf);
    drawPairs(pairsBox, data, step, L, show);
    drawList(listBox, data, step, L, show);
    drawVocab(vocabBox, data, step, L, show);
    moveCurve(step);
    // Step 0 is the text before any merge ("from 74 tokens to 74" would say nothing there).
    curveCaption.replaceChildren(rich(L(step ? "curve_caption" : "curve_caption_start"), {
      start: data.curve[0], now: data.curve[step],
      per_word: (data.curve[step] / Math.max(1, data.total_words)).toFixed(2), size: sizes[step],
    }));
    root.setAttribute("data-step", String(step));
    root.setAttribute("data-ms", (performance.now() - t0).toFixed(2));
  }

  first.addEventListener("click", () => { stopPlay(); setStep(0); });
  back.addEventListener("click", () => { stopPlay(); setStep(step - 1); });
  forward.addEventListener("click", () => { stopPlay(); setStep(step + 1); });
  toEnd.addEventListener("click", () => { stopPlay(); setStep(last); });
  slider.addEventListener("input", () => { stopPlay(); setStep(Number(slider.value)); });
  play.addEventListener("click", () => {
    if (isPlaying()) { stopPlay(); draw(); return; }
    if (step >= last) setStep(0); // play again from the start
    playing.set(knob.name, window.setInterval(() => {
      if (step >= last) { stopPlay(); draw(); return; }
      setStep(step + 1);
      if (step >= last) { stopPlay(); draw(); }
    }, data.play_ms));
    draw();
  });
  stopPlay(); // a new mount (a rerun) starts paused
  draw();
  stops.push(watchTheme(root, draw));
  return () => { stopPlay(); for (const stop of stops) stop(); };
}

// --- the parts ----------------------------------------------------------------------------

type Lab = (name: string) => string;
type Show = (raw: string) => string;

function drawHead(head: HTMLElement, ties: HTMLElement, data: Data, step: number, L: Lab, show: Show): void {
  const last = data.merges.length;
  ties.replaceChildren();
  if (step === 0) {
    head.replaceChildren(rich(L("start"), { last }));
    return;
  }
  const m = data.merges[step - 1];
  head.replaceChildren(rich(L("merge"), {
    n: step, last, left: codeSpan(show(m.left)), right: codeSpan(show(m.right)), new: codeSpan(show(m.new)), count: m.count,
  }));
  if (m.n_tied) {
    const list = document.createDocumentFragment();
    m.ties.slice(0, 6).forEach(([a, b], i) => {
      if (i) list.appendChild(document.createTextNode(", "));
      list.append(codeSpan(show(a)), document.createTextNode(" + "), codeSpan(show(b)));
    });
    const more = m.n_tied - Math.min(m.ties.length, 6);
    if (more > 0) list.appendChild(document.createTextNode(` … (+${more})`));
    ties.replaceChildren(rich(L("ties"), { ties: list }));
  }
}

function chip(raw: string, show: Show, tip: string, highlight: boolean): HTMLElement {
  const c = el("span", highlight ? "bpe-chip newest" : "bpe-chip", show(raw));
  c.style.setProperty("--c", tokenColour(raw));
  c.title = tip;
  c.tabIndex = 0; // the tooltip's exact values by keyboard too (focus shows it)
  c.setAttribute("data-tip", tip);
  return c;
}

function drawChips(box: HTMLElement, data: Data, step: number, L: Lab, show: Show, idOf: (raw: string) => string): void {
  const newest = step ? data.merges[step - 1].new : null;
  const rows = el("div", "bpe-words");
  rows.setAttribute("role", "list");
  rows.setAttribute("aria-label", fill(L("chips_title"), { n: step }));
  for (const [word, freq, start] of data.words) {
    const { pieces } = replay(start, data.merges, step);
    const row = el("div", "bpe-word");
    row.setAttribute("role", "listitem");
    row.appendChild(el("span", "bpe-word-label", `${word}  ×${freq}`));
    const chips = el("span", "bpe-chips");
    for (const p of pieces) {
      const tip = `${L("token")}: ${show(p)}\n${L("vocab_id")}: ${idOf(p)}\n${L("word")}: ${word}\n${L("frequency")}: ${freq}\n${L("tokens_in_word")}: ${pieces.length}`;
      chips.appendChild(chip(p, show, tip, p === newest));
    }
    row.appendChild(chips);
    rows.appendChild(row);
  }
  box.replaceChildren(
    el("div", "bpe-title", fill(L("chips_title"), { n: step })),
    el("div", "bpe-axes", `↓ ${L("chips_y")} · → ${L("chips_x")}`),
    rows,
    el("p", "bpe-caption", fill(L("chips_caption"), { shown: data.words.length, words: data.distinct })),
  );
}

function table(headers: string[], rows: (string | Node)[][], marks: string[] = []): HTMLTableElement {
  const tbl = el("table", "bpe-table");
  const thead = tbl.createTHead().insertRow();
  for (const h of headers) { const th = el("th", "", h); th.scope = "col"; thead.appendChild(th); }
  const body = tbl.createTBody();
  rows.forEach((cells, i) => {
    const tr = body.insertRow();
    if (marks[i]) tr.className = marks[i];
    for (const c of cells) {
      const td = tr.insertCell();
      if (c instanceof Node) td.appendChild(c);
      else td.textContent = c;
    }
  });
  return tbl;
}

function drawPairs(box: HTMLElement, data: Data, step: number, L: Lab, show: Show): void {
  if (!data.merges.length) { box.replaceChildren(); return; }
  const index = Math.max(step, 1) - 1;
  const m = data.merges[index];
  const status: Record<string, string> = { chosen: L("pairs_chosen"), tie: L("pairs_tie"), "": "" };
  const title = el("div", "bpe-title");
  title.appendChild(rich(L(step === 0 ? "pairs_title_next" : "pairs_title"), { n: index + 1 }));
  const rows = m.pairs.map(([a, b, c, s]) => [codeSpan(show(a)), codeSpan(show(b)), String(c), status[s] ?? ""]);
  const won = m.pairs.find((p) => p[3] === "chosen") ?? [m.left, m.right, m.count, "chosen"];
  box.replaceChildren(
    title,
    table([L("pairs_left"), L("pairs_right"), L("pairs_count"), L("pairs_status")], rows,
      m.pairs.map((p) => (p[3] === "chosen" ? "chosen" : p[3] === "tie" ? "tie" : ""))),
    el("p", "bpe-caption", fill(L("tie_rule"), { left: show(won[0]), right: show(won[1]), count: won[2] })),
  );
}

function drawList(box: HTMLElement, data: Data, step: number, L: Lab, show: Show): void {
  // Every merge's line is made once per training; a step shows the first ``step`` of them.
  let list = box.querySelector<HTMLOListElement>("ol.bpe-list");
  let title = box.querySelector<HTMLElement>(".bpe-title");
  let none = box.querySelector<HTMLElement>(".bpe-none");
  if (!list || !title || !none) {
    title = el("div", "bpe-title");
    none = el("p", "bpe-caption bpe-none", L("merges_none"));
    list = el("ol", "bpe-list bpe-scroll");
    list.tabIndex = 0; // a scrollable box is scrollable by keyboard
    for (const m of data.merges) {
      const li = el("li");
      li.append(codeSpan(show(m.left)), " + ", codeSpan(show(m.right)), " → ", codeSpan(show(m.new)), ` (${m.count})`);
      list.appendChild(li);
    }
    box.replaceChildren(title, none, list);
  }
  title.textContent = fill(L("merges_title"), { n: step });
  list.setAttribute("aria-label", title.textContent);
  none.hidden = step !== 0;
  list.hidden = step === 0;
  const items = list.children;
  for (let i = 0; i < items.length; i++) (items[i] as HTMLElement).hidden = i >= step;
  const box_ = list;
  requestAnimationFrame(() => { box_.scrollTop = box_.scrollHeight; }); // the newest merge in view (after layout)
}

function drawVocab(box: HTMLElement, data: Data, step: number, L: Lab, show: Show): void {
  const special = new Set(data.special);
  const bytes = new Set(data.bytes);
  const characters = data.base.filter((tok) => !special.has(tok) && !bytes.has(tok));
  const known = new Set(data.base);
  const merged: string[] = [];
  for (const m of data.merges.slice(0, step)) if (!known.has(m.new)) { known.add(m.new); merged.push(m.new); }
  const base = data.base.length;
  const size = base + merged.length;
  const metric = el("div", "bpe-metric");
  metric.append(el("div", "bpe-metric-label", L("vocab_size")), el("div", "bpe-metric-value", String(size)));
  const parts = el("div", "bpe-scroll bpe-vocab");
  parts.tabIndex = 0;
  const line = (label: DocumentFragment, tokens: string[]) => {
    const p = el("p");
    p.appendChild(label);
    for (const tok of tokens) p.append(" ", codeSpan(show(tok)));
    parts.appendChild(p);
  };
  if (data.special.length) line(rich(L("vocab_special")), data.special);
  if (data.bytes.length) {
    const p = el("p");
    p.appendChild(rich(L("vocab_bytes"), { n: data.bytes.length, first: codeSpan(show(data.bytes[0])),
                                           last: codeSpan(show(data.bytes[data.bytes.length - 1])) }));
    parts.appendChild(p);
  }
  line(rich(L("vocab_characters"), { n: characters.length }), characters);
  if (merged.length) line(rich(L("vocab_merged"), { n: merged.length }), merged);
  else { const p = el("p"); p.append(rich(L("vocab_merged"), { n: 0 }), " —"); parts.appendChild(p); }
  box.replaceChildren(
    el("div", "bpe-title", L("vocab_title")), metric,
    el("p", "bpe-caption", fill(L("vocab_summary"), { base, merged: merged.length, size })), parts,
  );
}

// The corpus length against merges learned: a line, the current step marked, exact values on
// hover or focus. Left axis: tokens; right axis: the same line read as tokens per word. Drawn
// once per training; returns the function that moves the marker to a step.
function drawCurve(box: HTMLElement, data: Data, step: number, sizes: number[], L: Lab): (step: number) => void {
  const n = data.curve.length;
  const W = 640, H = 260, ml = 64, mr = 64, mt = 12, mb = 44;
  const top = Math.max(...data.curve) * 1.05 || 1;
  const x = (i: number) => ml + (n > 1 ? (i / (n - 1)) * (W - ml - mr) : 0);
  const y = (v: number) => mt + (1 - v / top) * (H - mt - mb);
  const words = Math.max(1, data.total_words);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "bpe-svg", role: "img" });
  chart.setAttribute("aria-label", `${L("curve_title")}: ${L("curve_total")} ${data.curve[0]} → ${data.curve[n - 1]}`);
  // axes, ticks
  chart.appendChild(svg("line", { x1: ml, y1: H - mb, x2: W - mr, y2: H - mb, class: "bpe-axis" }));
  chart.appendChild(svg("line", { x1: ml, y1: mt, x2: ml, y2: H - mb, class: "bpe-axis" }));
  chart.appendChild(svg("line", { x1: W - mr, y1: mt, x2: W - mr, y2: H - mb, class: "bpe-axis" }));
  const text = (tx: number, ty: number, s: string, anchor: string, cls = "bpe-tick") => {
    const node = svg("text", { x: tx, y: ty, "text-anchor": anchor, class: cls });
    node.textContent = s;
    chart.appendChild(node);
    return node;
  };
  for (let k = 0; k <= 4; k++) {
    const v = (top / 1.05) * (k / 4);
    text(ml - 6, y(v) + 4, String(Math.round(v)), "end");
    text(W - mr + 6, y(v) + 4, (v / words).toFixed(2), "start");
    chart.appendChild(svg("line", { x1: ml, y1: y(v), x2: W - mr, y2: y(v), class: "bpe-grid-line" }));
  }
  const xticks = Math.min(n - 1, 8);
  for (let k = 0; k <= xticks; k++) {
    const i = xticks ? Math.round((k / xticks) * (n - 1)) : 0;
    text(x(i), H - mb + 16, String(i), "middle");
  }
  text((ml + W - mr) / 2, H - 6, L("curve_x"), "middle", "bpe-axis-title");
  const left = text(14, (mt + H - mb) / 2, L("curve_total"), "middle", "bpe-axis-title");
  left.setAttribute("transform", `rotate(-90 14 ${(mt + H - mb) / 2})`);
  const right = text(W - 10, (mt + H - mb) / 2, L("curve_per_word"), "middle", "bpe-axis-title");
  right.setAttribute("transform", `rotate(90 ${W - 10} ${(mt + H - mb) / 2})`);
  const path = data.curve.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join("");
  chart.appendChild(svg("path", { d: path, class: "bpe-line" }));
  const rule = svg("line", { x1: x(step), y1: mt, x2: x(step), y2: H - mb, class: "bpe-rule" });
  const dot = svg("circle", { cx: x(step), cy: y(data.curve[step]), r: 6, class: "bpe-dot" });
  chart.append(rule, dot);
  let current = step;
  const tipFor = (i: number) => `${L("curve_x")}: ${i}\n${L("curve_total")}: ${data.curve[i]}\n` +
    `${L("curve_per_word")}: ${(data.curve[i] / words).toFixed(3)}\n${L("vocab_size")}: ${sizes[i]}`;
  const tip = el("div", "bpe-tip");
  tip.hidden = true;
  tip.setAttribute("role", "status");
  const showTip = (i: number, px: number, py: number) => {
    tip.textContent = tipFor(i);
    tip.hidden = false;
    tip.style.left = `${px}%`;
    tip.style.top = `${py}%`;
  };
  // one invisible column per step: hover or tap shows that step's exact values
  for (let i = 0; i < n; i++) {
    const w = n > 1 ? (W - ml - mr) / (n - 1) : W - ml - mr;
    const hit = svg("rect", { x: x(i) - w / 2, y: mt, width: w, height: H - mt - mb, class: "bpe-hit" });
    hit.addEventListener("pointerenter", () => showTip(i, (x(i) / W) * 100, (y(data.curve[i]) / H) * 100));
    hit.addEventListener("pointerleave", () => { tip.hidden = true; });
    chart.appendChild(hit);
  }
  const wrap = el("div", "bpe-chart");
  wrap.tabIndex = 0;
  wrap.addEventListener("focus", () => showTip(current, (x(current) / W) * 100, (y(data.curve[current]) / H) * 100));
  wrap.addEventListener("blur", () => { tip.hidden = true; });
  wrap.append(chart, tip);
  box.replaceChildren(el("div", "bpe-title", L("curve_title")), wrap);
  return (to: number) => {
    current = to;
    for (const attr of ["x1", "x2"]) rule.setAttribute(attr, String(x(to)));
    dot.setAttribute("cx", String(x(to)));
    dot.setAttribute("cy", String(y(data.curve[to])));
  };
}

function drawEncode(root: HTMLElement, data: Data, step: number, L: Lab, show: Show, idOf: (raw: string) => string): void {
  root.replaceChildren();
  if (!data.encode.length) { root.appendChild(el("p", "bpe-caption", L("encode_empty"))); return; }
  root.appendChild(el("div", "bpe-title", fill(L("encode_chart"), { n: step })));
  const rows = el("div", "bpe-words");
  for (const [word, start] of data.encode) {
    const { pieces, fired } = replay(start, data.merges, step);
    const row = el("div", "bpe-word");
    row.setAttribute("data-word", word);
    const lineBox = el("div", "bpe-encode-line");
    lineBox.append(codeSpan(show(word)), " → ");
    const chips = el("span", "bpe-chips");
    for (const p of pieces) chips.appendChild(chip(p, show, `${L("token")}: ${show(p)}\n${L("vocab_id")}: ${idOf(p)}`, false));
    lineBox.appendChild(chips);
    row.appendChild(lineBox);
    const note = el("p", "bpe-caption");
    if (fired.length) {
      const list = document.createDocumentFragment();
      fired.forEach((k, i) => {
        const m = data.merges[k];
        if (i) list.appendChild(document.createTextNode(" · "));
        list.append(`#${m.rank} `, codeSpan(show(m.left)), "+", codeSpan(show(m.right)), "→", codeSpan(show(m.new)));
      });
      note.appendChild(rich(L("encode_applied"), { merges: list }));
    } else note.textContent = L("encode_no_merge");
    row.appendChild(note);
    rows.appendChild(row);
  }
  root.appendChild(rows);
  root.setAttribute("data-step", String(step));
}
