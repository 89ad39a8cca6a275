// Native form controls (keyboard: arrow keys on a focused slider, Tab between controls; touch
// works as on any input), each with a visible <label>, for the lesson components. They call
// back on every move; they never talk to the server.

import { el, uid } from "./dom";

function field(label: string, help?: string): { wrap: HTMLDivElement; id: string } {
  const wrap = el("div", "tl-field");
  const id = uid("tl");
  const lab = el("label", "tl-label", label);
  lab.htmlFor = id;
  wrap.append(lab);
  if (help) {
    const hint = el("span", "tl-help", "?");
    hint.title = help;
    hint.setAttribute("aria-hidden", "true");
    lab.append(" ", hint);
  }
  return { wrap, id };
}

export interface SliderOptions {
  knob: string; // data-knob, for tests and the bench
  label: string;
  min: number;
  max: number;
  step: number;
  value: number;
  format?: (v: number) => string;
  help?: string;
  onInput: (v: number) => void;
}

export function slider(o: SliderOptions): HTMLElement {
  const { wrap, id } = field(o.label, o.help);
  wrap.classList.add("tl-slider");
  wrap.dataset.knob = o.knob;
  const input = el("input");
  input.type = "range";
  input.id = id;
  input.min = String(o.min); input.max = String(o.max); input.step = String(o.step);
  input.value = String(o.value);
  const out = el("output");
  out.htmlFor.add(id);
  const format = o.format ?? String;
  const show = (v: number) => { out.textContent = format(v); input.setAttribute("aria-valuetext", format(v)); };
  show(o.value);
  input.addEventListener("input", () => { const v = Number(input.value); show(v); o.onInput(v); });
  if (o.help) input.setAttribute("aria-description", o.help);
  const row = el("div", "tl-slider-row");
  row.append(input, out);
  wrap.append(row);
  return wrap;
}

/** A slider over a fixed list of options (Streamlit's select_slider). */
export function choiceSlider<T>(o: { knob: string; label: string; options: T[]; value: T; format: (v: T) => string;
                                     help?: string; onInput: (v: T) => void }): HTMLElement {
  const index = Math.max(0, o.options.indexOf(o.value));
  return slider({
    knob: o.knob, label: o.label, min: 0, max: o.options.length - 1, step: 1, value: index, help: o.help,
    format: (i) => o.format(o.options[i]), onInput: (i) => o.onInput(o.options[i]),
  });
}

/** A whole-number box: a value outside [min, max] is marked invalid and not used. */
export function integerBox(o: { knob: string; label: string; min: number; max: number; value: number;
                                invalid: string; onInput: (v: number) => void }): HTMLElement {
  const { wrap, id } = field(o.label);
  wrap.classList.add("tl-number");
  wrap.dataset.knob = o.knob;
  const input = el("input");
  input.type = "number";
  input.id = id;
  input.inputMode = "numeric";
  input.min = String(o.min); input.max = String(o.max); input.step = "1";
  input.value = String(o.value);
  const error = el("span", "tl-invalid", "");
  error.id = uid("tl-err");
  input.setAttribute("aria-describedby", error.id);
  input.addEventListener("input", () => {
    const text = input.value.trim();
    const v = Number(text);
    const ok = text !== "" && Number.isInteger(v) && v >= o.min && v <= o.max;
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    error.textContent = ok ? "" : o.invalid;
    if (ok) o.onInput(v);
  });
  wrap.append(input, error);
  return wrap;
}

export function toggle(o: { knob: string; label: string; value: boolean; help?: string; onChange: (v: boolean) => void }): HTMLElement {
  const wrap = el("div", "tl-field tl-toggle");
  wrap.dataset.knob = o.knob;
  const lab = el("label");
  const input = el("input");
  input.type = "checkbox";
  input.setAttribute("role", "switch");
  input.checked = o.value;
  input.addEventListener("change", () => o.onChange(input.checked));
  lab.append(input, el("span", "tl-switch"), el("span", "", o.label));
  if (o.help) { lab.title = o.help; input.setAttribute("aria-description", o.help); }
  wrap.append(lab);
  return wrap;
}

export function select<T>(o: { knob: string; label: string; options: T[]; value: T; format: (v: T) => string;
                               onChange: (v: T) => void }): HTMLElement {
  const { wrap, id } = field(o.label);
  wrap.classList.add("tl-select");
  wrap.dataset.knob = o.knob;
  const sel = el("select");
  sel.id = id;
  o.options.forEach((opt, i) => {
    const option = el("option", "", o.format(opt));
    option.value = String(i);
    if (opt === o.value) option.selected = true;
    sel.append(option);
  });
  sel.addEventListener("change", () => o.onChange(o.options[Number(sel.value)]));
  wrap.append(sel);
  return wrap;
}

/** Up to `max` of many options, as a scrolling list of checkboxes (a multiselect). */
export function multiPick(o: { knob: string; label: string; options: number[]; chosen: number[]; max: number;
                               format: (v: number) => string; onChange: (v: number[]) => void }): HTMLElement {
  const box = el("fieldset", "tl-field tl-multi");
  box.dataset.knob = o.knob;
  box.append(el("legend", "tl-label", o.label));
  const list = el("div", "tl-multi-list");
  const chosen = new Set(o.chosen);
  const inputs: HTMLInputElement[] = [];
  const refresh = () => inputs.forEach((input, i) => {
    input.disabled = !chosen.has(o.options[i]) && chosen.size >= o.max;
  });
  o.options.forEach((opt) => {
    const lab = el("label", "tl-check");
    const input = el("input");
    input.type = "checkbox";
    input.value = String(opt);
    input.checked = chosen.has(opt);
    input.addEventListener("change", () => {
      if (input.checked) chosen.add(opt); else chosen.delete(opt);
      refresh();
      o.onChange(o.options.filter((v) => chosen.has(v)));
    });
    inputs.push(input);
    lab.append(input, el("span", "", o.format(opt)));
    list.append(lab);
  });
  refresh();
  box.append(list);
  return box;
}
