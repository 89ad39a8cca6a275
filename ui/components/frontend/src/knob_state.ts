// Browser knobs: a knob's durable value while it moves in the browser, with no websocket frame.
//
// The contract (docs: /work/notes/KNOBS_CONTRACT.md, Python side: ui/components/knobs.py):
//   * Python sends each knob as a KnobSpec: its name (= its link parameter and its ui.state
//     name), the server's durable value and the default (a default stays out of the link).
//   * `restoreKnob` says which value to show: the browser's newer value from sessionStorage
//     (another page's component in this tab moved it), unless the server's value changed since
//     the browser last saw it (a link, a commit from a trigger, a teacher), or this is the
//     first render since the document loaded (the address bar the server just read is the truth).
//   * `saveKnob` (on every move) writes sessionStorage and merges the value into the address
//     bar with history.replaceState (so "Link to this view" copies it). Streamlit rewrites the
//     address bar from the server's query params; we merge again after each of its changes
//     (the Navigation API's currententrychange where the browser has it, else after renders).
//   * Nothing here calls setStateValue/setTriggerValue: a component sends its knobs' values
//     only with a trigger for a server action (`knobValues`), and Python validates and commits.

// A number, or a value already written as its link text (a flag "1"/"0" travels as 1/0; a list
// of pairs "0,5"; a typed text): ui.state parses it back from the link either way.
export type KnobValue = number | string;

export interface KnobSpec<T extends KnobValue = number> {
  name: string; // the ui.state name; also the link parameter
  value: T; // the server's durable value (already checked by Python)
  default: T; // the declared default: a default value stays out of the link
}

interface Stored {
  v: KnobValue; // the browser's value
  s: KnobValue; // the server's value when the browser last saw it
  d: string; // the document it was written in (a fresh load takes the server's value)
}

const PREFIX = "tj.knob.";
const DOCUMENT = String(performance.timeOrigin); // one value per loaded document

// Knobs shown now, by name, with the page (pathname) they belong to: merged into the address bar.
const shown = new Map<string, { value: KnobValue; fallback: KnobValue; path: string }>();

function read(name: string): Stored | null {
  try {
    const raw = sessionStorage.getItem(PREFIX + name);
    if (raw === null) return null;
    const s = JSON.parse(raw) as Stored;
    const ok = (v: unknown) => typeof v === "number" || typeof v === "string";
    return ok(s.v) && ok(s.s) && typeof s.d === "string" ? s : null;
  } catch {
    return null; // storage blocked (privacy mode) or a stale format: behave as a fresh knob
  }
}

function write(name: string, stored: Stored): void {
  try {
    sessionStorage.setItem(PREFIX + name, JSON.stringify(stored));
  } catch {
    /* storage blocked: the value still lives in the address bar and the page */
  }
}

/** The value a knob shows now (see the rules above); also records it for the address bar. */
export function restoreKnob<T extends KnobValue = number>(spec: KnobSpec<T>): T {
  const stored = read(spec.name);
  let value = spec.value;
  if (stored && stored.d === DOCUMENT && stored.s === spec.value && typeof stored.v === typeof spec.value) value = stored.v as T;
  write(spec.name, { v: value, s: spec.value, d: DOCUMENT });
  remember(spec, value);
  return value;
}

/** Record a moved knob: sessionStorage and the address bar. Sends nothing to the server. */
export function saveKnob<T extends KnobValue = number>(spec: KnobSpec<T>, value: T): void {
  const stored = read(spec.name);
  write(spec.name, { v: value, s: stored && stored.d === DOCUMENT ? stored.s : spec.value, d: DOCUMENT });
  remember(spec, value);
}

/** {name: value} of the given knobs as shown now: what a trigger carries to the server. */
export function knobValues(specs: KnobSpec[], current: (name: string) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const spec of specs) out[spec.name] = current(spec.name);
  return out;
}

function remember(spec: KnobSpec<KnobValue>, value: KnobValue): void {
  shown.set(spec.name, { value, fallback: spec.default, path: location.pathname });
  watchAddressBar();
  mergeIntoAddressBar();
}

/** Put every shown knob of this page into the address bar (defaults removed); only if it differs. */
export function mergeIntoAddressBar(): void {
  const url = new URL(location.href);
  for (const [name, knob] of shown) {
    if (knob.path !== url.pathname) continue; // a knob of another page: not this link's business
    if (knob.value === knob.fallback) url.searchParams.delete(name);
    else url.searchParams.set(name, String(knob.value));
  }
  if (url.href !== location.href) history.replaceState(history.state, "", url.href);
}

interface NavigationLike {
  addEventListener(type: "currententrychange", listener: () => void): void;
}

let watching = false;

// Streamlit's page_info_changed rewrites the address from the server's query params, which do not
// hold a value the browser has not committed yet: merge ours again after each such change. The
// merge is idempotent (no replaceState when nothing differs), so it cannot loop.
function watchAddressBar(): void {
  if (watching) return;
  watching = true;
  const nav = (window as unknown as { navigation?: NavigationLike }).navigation;
  if (nav) nav.addEventListener("currententrychange", () => mergeIntoAddressBar());
  else window.addEventListener("popstate", () => mergeIntoAddressBar());
}
