// Number formatting exactly as the Python pages print (f"{v:.3f}", format(v, ".4g"), the
// typographic minus). JavaScript's toFixed rounds exact ties up, Python rounds them to even, so
// both go through the exact decimal expansion of the double (toFixed(100) is exact for every
// value the lessons show) and round half-to-even here.

const MINUS = "\u2212";

function roundDigits(digits: string, point: number, keep: number): { digits: string; point: number } {
  // digits: the decimal digits (no sign), point: how many of them are before the decimal point.
  const cut = point + keep; // index of the first dropped digit
  if (cut >= digits.length) return { digits: digits.padEnd(cut, "0"), point };
  if (cut < 0) return { digits: "0".repeat(point + keep > 0 ? point + keep : 0), point };
  const head = digits.slice(0, cut);
  const rest = digits.slice(cut);
  const first = rest.charCodeAt(0) - 48;
  const tail = /[1-9]/.test(rest.slice(1));
  const last = cut > 0 ? head.charCodeAt(cut - 1) - 48 : 0;
  const up = first > 5 || (first === 5 && (tail || last % 2 === 1));
  if (!up) return { digits: head, point };
  const out = head.split("");
  let i = out.length - 1;
  while (i >= 0 && out[i] === "9") { out[i] = "0"; i--; }
  if (i >= 0) { out[i] = String.fromCharCode(out[i].charCodeAt(0) + 1); return { digits: out.join(""), point }; }
  return { digits: "1" + out.join(""), point: point + 1 };
}

function expansion(x: number): { negative: boolean; digits: string; point: number } {
  const text = Math.abs(x).toFixed(100);
  const [whole, frac] = text.split(".");
  return { negative: x < 0 || Object.is(x, -0), digits: whole + frac, point: whole.length };
}

/** Python's f"{x:.{decimals}f}" (ASCII minus). */
export function pyFixed(x: number, decimals: number): string {
  if (!isFinite(x)) return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (Math.abs(x) >= 1e21) return x.toFixed(decimals); // not reached by the lessons
  // toFixed rounds the exact binary value correctly; only an exact tie (…5 exactly) is rounded
  // differently (up, not to even). Far from a tie, it is the answer (a table of 512 rows stays fast).
  const scaled = Math.abs(x) * Math.pow(10, decimals);
  const part = scaled - Math.floor(scaled);
  if (!Object.is(x, -0) && Math.abs(part - 0.5) > 1e-6 * Math.max(1, scaled)) return x.toFixed(decimals);
  const e = expansion(x);
  const r = roundDigits(e.digits, e.point, decimals);
  let whole = r.digits.slice(0, r.point).replace(/^0+(?=\d)/, "");
  if (whole === "") whole = "0";
  const frac = r.digits.slice(r.point, r.point + decimals);
  return (e.negative ? "-" : "") + whole + (decimals > 0 ? "." + frac : "");
}

/** Python's format(x, f".{p}g") (ASCII minus). */
export function pyG(x: number, p: number): string {
  if (!isFinite(x)) return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const e = expansion(x);
  const lead = e.digits.search(/[1-9]/);
  let exp = e.point - lead - 1; // decimal exponent of the first significant digit
  // round to p significant digits
  let r = roundDigits(e.digits, e.point, p - 1 - exp);
  const lead2 = r.digits.search(/[1-9]/);
  exp = r.point - lead2 - 1;
  if (exp < -4 || exp >= p) {
    const sig = r.digits.slice(lead2, lead2 + p).padEnd(p, "0");
    let mant = sig[0] + (p > 1 ? "." + sig.slice(1) : "");
    mant = mant.replace(/\.?0+$/, "");
    const ee = Math.abs(exp);
    return `${sign}${mant}e${exp < 0 ? "-" : "+"}${ee < 10 ? "0" + ee : ee}`;
  }
  const decimals = Math.max(0, p - 1 - exp);
  r = roundDigits(e.digits, e.point, decimals);
  let whole = r.digits.slice(0, r.point).replace(/^0+(?=\d)/, "");
  if (whole === "") whole = "0";
  let frac = r.digits.slice(r.point, r.point + decimals).replace(/0+$/, "");
  return sign + whole + (frac ? "." + frac : "");
}

/** Python's f"{x:.{d}e}" (e.g. 1.2e-16 -> "1.2e-16"), ties to even like the rest. */
export function pyExp(x: number, d: number): string {
  if (!isFinite(x)) return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  if (x === 0) return `${sign}${(0).toFixed(d)}e+00`;
  const e = expansion(x);
  const exp0 = e.point - e.digits.search(/[1-9]/) - 1;
  const r = roundDigits(e.digits, e.point, d - exp0);
  const lead = r.digits.search(/[1-9]/);
  const exp = r.point - lead - 1;
  const sig = r.digits.slice(lead, lead + d + 1).padEnd(d + 1, "0");
  const a = Math.abs(exp);
  return `${sign}${sig[0]}${d > 0 ? "." + sig.slice(1) : ""}e${exp < 0 ? "-" : "+"}${a < 10 ? "0" + a : a}`;
}

/** Python's f"{x:,}" for whole numbers and f"{x:,.{d}f}". */
export function pyComma(x: number, decimals = 0): string {
  const text = pyFixed(x, decimals);
  const [whole, frac] = text.split(".");
  const neg = whole.startsWith("-");
  const digits = neg ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return (neg ? "-" : "") + grouped + (frac !== undefined ? "." + frac : "");
}

/** The typographic minus sign, as the pages print. */
export function typographic(text: string): string {
  return text.replace(/-/g, MINUS);
}

/** positional_encoding.signed: f"{v:.{digits}f}" with a real minus, −0.000 printed as 0.000. */
export function signed(value: number, digits = 3): string {
  let text = pyFixed(value, digits);
  if (text.startsWith("-")) text = MINUS + text.slice(1);
  const zero = "0." + "0".repeat(digits);
  return text === MINUS + zero ? zero : text;
}

/** self_attention.num: integers plain, others with `decimals` places, −∞. */
export function num(v: number, decimals = 3): string {
  if (v === -Infinity) return MINUS + "\u221e";
  const text = Number.isInteger(v) && Math.abs(v) < 1e9 ? String(v) : pyFixed(v, decimals);
  return typographic(text);
}

/** self_attention.short: at most 4 significant digits, −∞. */
export function short(v: number): string {
  return v === -Infinity ? MINUS + "\u221e" : typographic(pyG(v, 4));
}

/** self_attention.vec: "[a, b, c]". */
export function vec(values: ArrayLike<number>, decimals = 3): string {
  return "[" + Array.from(values, (v) => num(v, decimals)).join(", ") + "]";
}

/** "{name}" placeholders of a translated template, filled as text (never markup). */
export function fill(template: string, values: Record<string, string | number>): string {
  // As Python's str.format: {{ and }} are literal braces.
  return template.replace(/\{\{|\}\}|\{(\w+)\}/g, (m, name) =>
    m === "{{" ? "{" : m === "}}" ? "}" : name in values ? String(values[name]) : m);
}

const SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉";
export function sub(i: number): string {
  return String(i).replace(/\d/g, (d) => SUBSCRIPT[Number(d)]);
}
