// How a lesson view mounts (the Positional-encoding and Self-attention components share it):
// one root in the component's shadow root, the page's knobs adopted from the server's data,
// and a redraw whenever a knob the view follows moves on the page's bus (no server run).

import * as bus from "./bus";
import { Tooltip } from "./charts";
import { el, isDark } from "./dom";

export interface LessonData { view: string; labels: Record<string, string>; knobs: bus.LessonKnob[]; presenter?: boolean }
export interface LessonComponent<D extends LessonData> { data: D; key: string; parentElement: HTMLElement | ShadowRoot }
/** A view's drawing: its controls go in `controls`, its output in `out`; `follows` names the knobs it redraws on. */
export interface Drawing { redraw: () => void; follows: string[] }
export type Draw<D> = (data: D, L: (k: string) => string, controls: HTMLElement, out: HTMLElement, tip: Tooltip,
  root: HTMLElement) => Drawing;

const stops = new Map<string, () => void>(); // each mounted view's listener, by its key

export function mountLesson<D extends LessonData>(component: LessonComponent<D>, page: string, testPrefix: string,
  draw: Draw<D>): () => void {
  const { data, parentElement, key } = component;
  stops.get(key)?.(); // Streamlit mounts again when the data changes: the old drawing stops listening
  const L = (name: string) => data.labels[name] ?? name;
  bus.adopt(page, data.knobs);
  for (const old of Array.from(parentElement.children)) if (old.classList.contains("tl")) old.remove();
  const root = el("div", "tl");
  root.dataset.testid = `${testPrefix}-${data.view}`;
  if (data.presenter) root.classList.add("presenter");
  parentElement.appendChild(root);
  if (isDark(root)) root.classList.add("dark");
  const tip = new Tooltip(root);
  const controls = el("div", "tl-controls");
  const out = el("div", "tl-out");
  root.append(controls, out);
  const { redraw, follows } = draw(data, L, controls, out, tip, root);
  redraw();
  const stop = bus.listen(page, (_values, changed) => {
    if (!changed.some((name) => follows.includes(name))) return;
    const t0 = performance.now();
    redraw();
    root.dataset.drawMs = (performance.now() - t0).toFixed(2);
  });
  const cleanup = () => { stop(); tip.hide(); stops.delete(key); };
  stops.set(key, cleanup);
  return cleanup;
}
