// The knob values of one page, shared by every lesson component mounted on it (the table's
// d_model also drives the vector and the relative check below it), kept durable through the
// browser knobs' shared state (../knob_state.ts: sessionStorage and the address bar, the server's
// value adopted only when it changed). Nothing here talks to the server.
//
// Python sends each knob as a KnobSpec plus its kind (ui/components/lessons.knob_specs):
//   int  a whole number (a choice of numbers too)       flag  1 / 0 (the link's "1" / "0")
//   list the link text of a list of pairs ("0,5"); the default's text means "the default pairs"
//        (null here: the view picks the default for the width it draws)
//   text a typed text (the softmax lab's scores) or a named choice

import { KnobSpec, KnobValue, restoreKnob, saveKnob } from "../knob_state";

export type Kind = "int" | "flag" | "list" | "text";
export interface LessonKnob extends KnobSpec<KnobValue> { kind: Kind }

type Values = Record<string, unknown>;
type Listener = (values: Values, changed: string[]) => void;

interface PageKnobs { values: Values; specs: Map<string, LessonKnob>; listeners: Set<Listener> }
const pages = new Map<string, PageKnobs>();

function page(name: string): PageKnobs {
  let p = pages.get(name);
  if (!p) { p = { values: {}, specs: new Map(), listeners: new Set() }; pages.set(name, p); }
  return p;
}

function decode(spec: LessonKnob, value: KnobValue): unknown {
  switch (spec.kind) {
    case "int": return typeof value === "number" ? value : Number(value);
    case "flag": return value === 1 || value === "1";
    case "list":
      if (value === spec.default) return null;
      return String(value) === "" ? [] : String(value).split(",").map(Number);
    default: return String(value);
  }
}

function encode(spec: LessonKnob, value: unknown): KnobValue {
  switch (spec.kind) {
    case "int": return Number(value);
    case "flag": return value ? 1 : 0;
    case "list": return value === null ? spec.default : (value as number[]).join(",");
    default: return String(value);
  }
}

/** The page's values: each knob's browser value (moved here or on another page of this tab),
 *  unless the server's value changed since the browser last saw it (a link, another commit). */
export function adopt(pageName: string, specs: LessonKnob[]): Values {
  const p = page(pageName);
  for (const spec of specs) {
    p.specs.set(spec.name, spec);
    p.values[spec.name] = decode(spec, restoreKnob<KnobValue>(spec));
  }
  return p.values;
}

export function values(pageName: string): Values {
  return page(pageName).values;
}

/** Set knob values (kept durable) and tell every listener of the page (the caller's redraw too). */
export function set(pageName: string, changes: Values): void {
  const p = page(pageName);
  Object.assign(p.values, changes);
  for (const [name, value] of Object.entries(changes)) {
    const spec = p.specs.get(name);
    if (spec) saveKnob<KnobValue>(spec, encode(spec, value));
  }
  const changed = Object.keys(changes);
  for (const l of Array.from(p.listeners)) l(p.values, changed);
}

/** Listen to the page's changes; returns the function that stops listening. */
export function listen(pageName: string, listener: Listener): () => void {
  const p = page(pageName);
  p.listeners.add(listener);
  return () => p.listeners.delete(listener);
}
