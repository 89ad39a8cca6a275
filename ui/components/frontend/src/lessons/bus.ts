// The knob values of one page, shared by every lesson component mounted on it (the table's
// d_model also drives the vector and the relative check below it): one in-memory record per
// page, and a listener list. Nothing here talks to the server.

type Values = Record<string, unknown>;
type Listener = (values: Values, changed: string[]) => void;

interface PageKnobs { values: Values; serverSeen: Record<string, string>; listeners: Set<Listener> }
const pages = new Map<string, PageKnobs>();

function page(name: string): PageKnobs {
  let p = pages.get(name);
  if (!p) { p = { values: {}, serverSeen: {}, listeners: new Set() }; pages.set(name, p); }
  return p;
}

/** The page's values, taking each server value that differs from the one this tab last saw
 *  from the server (a link, another page's commit); otherwise the browser's newer value stays. */
export function adopt(pageName: string, server: Values): Values {
  const p = page(pageName);
  for (const [k, v] of Object.entries(server)) {
    const text = JSON.stringify(v);
    if (p.serverSeen[k] !== text || !(k in p.values)) p.values[k] = v;
    p.serverSeen[k] = text;
  }
  return p.values;
}

export function values(pageName: string): Values {
  return page(pageName).values;
}

/** Set knob values and tell every listener of the page (the caller's own redraw included). */
export function set(pageName: string, changes: Values): void {
  const p = page(pageName);
  Object.assign(p.values, changes);
  const changed = Object.keys(changes);
  for (const l of Array.from(p.listeners)) l(p.values, changed);
}

/** Listen to the page's changes; returns the function that stops listening. */
export function listen(pageName: string, listener: Listener): () => void {
  const p = page(pageName);
  p.listeners.add(listener);
  return () => p.listeners.delete(listener);
}
