// One labelled knob control for browser knobs (knob_state.ts): a native range (or number) input,
// so mouse, touch and keyboard (arrow keys, Page Up/Down, Home/End) work as everywhere; the label
// is a real <label for>, the shown value an <output>, and aria-valuetext says "off" where the
// number means off. Strings go in as textContent/attributes only.

export interface KnobSliderOptions {
  id: string; // unique in the component's root (label -> input)
  label: string;
  help?: string; // a one-line hint under the control (also the input's aria-describedby)
  kind?: "range" | "number";
  min: number;
  max: number;
  step: number;
  value: number;
  format: (value: number) => string; // what the <output> and aria-valuetext say
  onInput: (value: number) => void; // every move: redraw, saveKnob (no server message)
}

/** Round to the step's grid so 0.1 + 0.05 shows and travels as 0.15, not 0.15000000000000002. */
export function snap(value: number, step: number, min: number): number {
  const digits = Math.max(0, (String(step).split(".")[1] ?? "").length);
  return Number((Math.round((value - min) / step) * step + min).toFixed(digits));
}

export function knobSlider(o: KnobSliderOptions): HTMLElement {
  const wrap = document.createElement("div");
  wrap.className = "knob";
  wrap.dataset.knob = o.id;
  const label = document.createElement("label");
  label.className = "knob-label";
  label.htmlFor = `knob-${o.id}`;
  label.textContent = o.label;
  const input = document.createElement("input");
  input.id = `knob-${o.id}`;
  input.type = o.kind ?? "range";
  input.min = String(o.min);
  input.max = String(o.max);
  input.step = String(o.step);
  input.value = String(o.value);
  const out = document.createElement("output");
  out.className = "knob-value";
  out.htmlFor.add(input.id);
  const show = (v: number) => {
    out.textContent = o.format(v);
    input.setAttribute("aria-valuetext", o.format(v));
  };
  show(o.value);
  input.addEventListener("input", () => {
    const raw = Number(input.value);
    if (input.value === "" || !Number.isFinite(raw)) return; // a number box being retyped
    const v = snap(Math.min(Math.max(raw, o.min), o.max), o.step, o.min);
    show(v);
    o.onInput(v);
  });
  wrap.append(label, input, out);
  if (o.help) {
    const help = document.createElement("div");
    help.className = "knob-help";
    help.id = `knob-${o.id}-help`;
    help.textContent = o.help;
    input.setAttribute("aria-describedby", help.id);
    wrap.append(help);
  }
  return wrap;
}
