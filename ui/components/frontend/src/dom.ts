// Small DOM helpers shared by the page components. Every user-visible string goes in through
// textContent or an attribute, never as markup.

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** A translated template as DOM: "{name}" placeholders filled with text or nodes, and the
 *  templates' only markup, "**bold**", as <strong>. Values never become markup. */
export function rich(template: string, values: Record<string, string | number | Node> = {}): DocumentFragment {
  const out = document.createDocumentFragment();
  const parts = template.split("**");
  parts.forEach((part, i) => {
    const host: Node = i % 2 === 1 ? out.appendChild(document.createElement("strong")) : out;
    const re = /\{(\w+)\}/g;
    let last = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(part)) !== null) {
      if (m.index > last) host.appendChild(document.createTextNode(part.slice(last, m.index)));
      const v = values[m[1]];
      if (v === undefined) host.appendChild(document.createTextNode(m[0]));
      else if (v instanceof Node) host.appendChild(v.cloneNode(true));
      else host.appendChild(document.createTextNode(String(v)));
      last = m.index + m[0].length;
    }
    if (last < part.length) host.appendChild(document.createTextNode(part.slice(last)));
  });
  return out;
}

/** Plain-text fill (attributes, titles). */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (m, name) => (name in values ? String(values[name]) : m)).replace(/\*\*/g, "");
}

/** A token as a code span (its visible form: spaces as ␣, as ui.tokens.display_token made it). */
export function codeSpan(text: string): HTMLElement {
  return el("code", "tj-code", text);
}

/** Okabe–Ito, a palette that stays distinct under the three colour-blindnesses. */
export const PALETTE = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"];

/** A stable palette colour for a token (same token, same colour). */
export function tokenColour(token: string): string {
  let h = 2166136261;
  for (let i = 0; i < token.length; i++) {
    h ^= token.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return PALETTE[(h >>> 0) % PALETTE.length];
}

/** A theme switch restyles the page without calling the component again: ``fn`` on change. */
export function watchTheme(root: Element, fn: () => void): () => void {
  const read = () => {
    const s = getComputedStyle(root);
    return s.getPropertyValue("--st-text-color") + s.getPropertyValue("--st-background-color");
  };
  let seen = read();
  const timer = window.setInterval(() => {
    const now = read();
    if (now !== seen) { seen = now; fn(); }
  }, 700);
  return () => window.clearInterval(timer);
}
