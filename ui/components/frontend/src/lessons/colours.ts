// Vega's colour schemes as Streamlit 1.67 bundles them (ui/charts/heat_image.py uses the same
// stops): a heat map drawn here looks like the server's Vega heat maps. Okabe–Ito for series.

const STOPS: Record<string, string> = {
  redblue: "8c0d25bf363adf745ef4ae91fbdbc9f2efeed2e5ef9dcae15da2cb2f78b3134b85",
  blues: "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
};
export const MISSING = "#9e9e9e";
const ramps = new Map<string, number[][]>();

function ramp(scheme: string): number[][] {
  let r = ramps.get(scheme);
  if (!r) {
    const text = STOPS[scheme];
    r = [];
    for (let i = 0; i < text.length; i += 6) r.push([0, 2, 4].map((c) => parseInt(text.slice(i + c, i + c + 2), 16)));
    ramps.set(scheme, r);
  }
  return r;
}

/** RGB at position t ∈ [0, 1] along the scheme (heat_image.scheme_colours). */
export function schemeColour(t: number, scheme: string): [number, number, number] {
  const r = ramp(scheme);
  const segments = r.length - 1;
  const position = Math.min(Math.max(isFinite(t) ? t : 0, 0), 1) * segments;
  const index = Math.min(Math.floor(position), segments - 1);
  const local = position - index;
  return [0, 1, 2].map((c) => Math.floor(r[index][c] * (1 - local) + r[index + 1][c] * local + 0.5)) as [number, number, number];
}

export interface ColourScale { symmetric: boolean; low: number; high: number }

/** Where a value falls along the scheme (heat_image.colour_positions): symmetric runs red → blue reversed. */
export function colourOf(v: number, scale: ColourScale): string {
  if (!isFinite(v)) return MISSING;
  let t: number;
  let scheme: string;
  if (scale.symmetric) {
    const bound = scale.high || 1;
    t = 1 - (v + bound) / (2 * bound);
    scheme = "redblue";
  } else {
    const span = scale.high - scale.low;
    t = 0.12 + (span > 0 ? (v - scale.low) / span : 0) * 0.88;
    scheme = "blues";
  }
  const [r, g, b] = schemeColour(t, scheme);
  return `rgb(${r},${g},${b})`;
}

/** The same colour as colourOf, as RGB numbers (a big heat map fills pixels, not strings). */
export function colourRgb(v: number, scale: ColourScale): [number, number, number] {
  if (!isFinite(v)) return [0x9e, 0x9e, 0x9e];
  if (scale.symmetric) {
    const bound = scale.high || 1;
    return schemeColour(1 - (v + bound) / (2 * bound), "redblue");
  }
  const span = scale.high - scale.low;
  return schemeColour(0.12 + (span > 0 ? (v - scale.low) / span : 0) * 0.88, "blues");
}

/** Black or white text, whichever reads on this cell colour. */
export function inkOn(colour: string): string {
  const m = /rgb\((\d+),(\d+),(\d+)\)/.exec(colour);
  if (!m) return "#000";
  const [r, g, b] = [m[1], m[2], m[3]].map((c) => Number(c) / 255);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 ? "#111" : "#fff";
}

export const OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
export const OKABE_ITO_DARK = ["#56B4E9", "#E69F00", "#2BD4A0", "#E69AC7", "#8FD0F5", "#FF7A33", "#F0E442", "#FFFFFF"];
