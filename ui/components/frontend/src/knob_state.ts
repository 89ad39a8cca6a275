// A browser knob's durable value without a round trip (docs: /work/notes/KNOBS_ANALYSIS.md).
//
// While a knob moves, its value lives here: in memory for this document (Streamlit's page
// changes keep the document), in sessionStorage (a reload of this tab) and in the address bar
// (history.replaceState, defaults left out), so "Link to this view" and a fresh load carry it
// and ui.state.read_url restores it on the server. Nothing here sends a websocket message.
//
// The server's value (from a link, another page's commit, a teacher) arrives in the
// component's data; it wins only when it differs from the server value last seen for this
// knob, else the newer browser value stays (a rerun for another reason must not undo a move).

export interface ServerKnob<T> {
  name: string; // the ui.state name, which is also the link parameter
  value: T; // the server's durable value, already checked there
  default: T; // left out of the address bar
  scope?: string; // what the value belongs to (e.g. one training's corpus): a new scope adopts the server's value
}

interface Held {
  value: unknown;
  serverSeen: string; // JSON of the server value this browser value was compared with
}

const held = new Map<string, Held>();
const serverMark = (knob: ServerKnob<unknown>) => JSON.stringify([knob.value, knob.scope ?? ""]);
const STORE = "tj.knob.";

function stored(name: string): Held | null {
  try {
    const raw = window.sessionStorage.getItem(STORE + name);
    if (raw === null) return null;
    const parsed = JSON.parse(raw) as Held;
    return parsed && typeof parsed === "object" && "serverSeen" in parsed ? parsed : null;
  } catch {
    return null; // storage disabled or a damaged entry: the server value stands
  }
}

function store(name: string, entry: Held): void {
  held.set(name, entry);
  try {
    window.sessionStorage.setItem(STORE + name, JSON.stringify(entry));
  } catch {
    // private mode or a full quota: the in-memory copy still serves this page's life
  }
}

/** The value a knob should show now: the server's when it moved, else the browser's own,
 *  passed through ``check`` (a stale or tampered stored value falls back to the server's). */
export function adopt<T>(knob: ServerKnob<T>, check: (value: unknown) => T | null): T {
  const seen = serverMark(knob);
  const mine = held.get(knob.name) ?? stored(knob.name);
  if (mine && mine.serverSeen === seen) {
    const ok = check(mine.value);
    if (ok !== null) return ok;
  }
  store(knob.name, { value: knob.value, serverSeen: seen });
  return knob.value;
}

/** Record a move made in the browser (and put it in the address bar). */
export function remember<T>(knob: ServerKnob<T>, value: T): void {
  store(knob.name, { value, serverSeen: serverMark(knob) });
  toAddress(knob, value);
}

/** Merge the browser's value into the address bar (a server URL sync may have dropped it). */
export function toAddress<T>(knob: ServerKnob<T>, value: T): void {
  try {
    const url = new URL(window.location.href);
    const text = typeof value === "boolean" ? (value ? "1" : "0") : String(value); // ui.state.flag's dump
    if (JSON.stringify(value) === JSON.stringify(knob.default)) url.searchParams.delete(knob.name);
    else url.searchParams.set(knob.name, text);
    if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url.href);
  } catch {
    // a sandboxed document without history access: the value still lives in memory
  }
}

/** Integer in [low, high], or null. */
export function intIn(low: number, high: number): (value: unknown) => number | null {
  return (value) => (typeof value === "number" && Number.isInteger(value) && value >= low && value <= high ? value : null);
}

/** An integer clamped into [low, high] (a shorter training keeps the step it can), or null. */
export function intClamped(low: number, high: number): (value: unknown) => number | null {
  return (value) => (typeof value === "number" && Number.isInteger(value) ? Math.max(low, Math.min(high, value)) : null);
}

/** A boolean, or null. */
export function isFlag(value: unknown): boolean | null {
  return typeof value === "boolean" ? value : null;
}

// Two mounts can show one knob (the BPE steps and the encode box below them): a move in one
// redraws the other, still without the server.
const listeners = new Map<string, Set<(value: unknown) => void>>();

/** Call ``fn`` with the knob's new value after every browser move; returns the unsubscribe. */
export function onMove(name: string, fn: (value: unknown) => void): () => void {
  let set = listeners.get(name);
  if (!set) listeners.set(name, (set = new Set()));
  set.add(fn);
  return () => { set!.delete(fn); };
}

/** ``remember`` and tell the knob's other mounts. */
export function move<T>(knob: ServerKnob<T>, value: T): void {
  remember(knob, value);
  for (const fn of Array.from(listeners.get(knob.name) ?? [])) fn(value);
}

// The server rewrites the address bar when its own link values change (page_info_changed):
// that drops a value only the browser knows. Every mounted knob puts its value back, checked a
// few times a second (a comparison of two strings when nothing moved), on its own page only.
interface Kept { knob: ServerKnob<unknown>; get: () => unknown; path: string }
const inAddress = new Map<string, Kept>();
let addressTimer = 0;

/** Keep ``get()`` in the address bar while this mount lives; returns the stop function. */
export function keepInAddress<T>(knob: ServerKnob<T>, get: () => T): () => void {
  const entry: Kept = { knob: knob as ServerKnob<unknown>, get, path: window.location.pathname };
  inAddress.set(knob.name, entry);
  if (!addressTimer) {
    addressTimer = window.setInterval(() => {
      for (const kept of inAddress.values()) {
        if (window.location.pathname === kept.path) toAddress(kept.knob, kept.get());
      }
    }, 400);
  }
  toAddress(knob, get());
  return () => {
    if (inAddress.get(knob.name) === entry) inAddress.delete(knob.name);
    if (!inAddress.size && addressTimer) {
      window.clearInterval(addressTimer);
      addressTimer = 0;
    }
  };
}
