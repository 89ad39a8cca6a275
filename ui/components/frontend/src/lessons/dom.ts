// DOM helpers of the lesson components (on top of ../dom.ts). Every user-visible string goes in through
// textContent or an attribute, never as markup.

import { el } from "../dom";

// The element builders are the shared ones (../dom.ts); what follows is the lessons' own.
export { el, svg } from "../dom";

/** Text with **bold** spans (the translated captions use them), built as nodes, never markup. */
export function richText(tag: "p" | "div" | "span", cls: string, text: string): HTMLElement {
  const node = el(tag, cls);
  text.split("**").forEach((part, i) => {
    if (!part) return;
    node.append(i % 2 === 1 ? el("strong", "", part) : document.createTextNode(part));
  });
  return node;
}

let idCounter = 0;
export function uid(prefix: string): string {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

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

/** Is Streamlit's theme dark? (its --st-background-color, inherited into the shadow root) */
export function isDark(node: Element): boolean {
  const bg = parseColour(getComputedStyle(node).getPropertyValue("--st-background-color"));
  if (!bg) return false;
  const [r, g, b] = bg.map((c) => c / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.45;
}

/** A computed theme colour of `node` (for canvas drawing). */
export function cssColour(node: Element, name: string, fallback: string): string {
  const v = getComputedStyle(node).getPropertyValue(name).trim();
  return v || fallback;
}
