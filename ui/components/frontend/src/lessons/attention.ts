// The self-attention math of core/lessons/attention_math.py that the page's knobs change
// (÷√d_k, the causal mask, the query row, the softmax lab), step for step in float64. Q, K, V
// and Q·Kᵀ come from the server once (they do not depend on these knobs).
// tests/e2e/test_attention.py compares the browser's numbers with the Python functions.

export const MAX_ABS_VALUE = 1e6;
export const MAX_TOKENS = 12;

/** A problem code, translated by the page (self_attention.problem.<code>). */
export class InputProblem extends Error {
  constructor(public code: string) { super(code); }
}

const NEG_INF_WORDS = new Set(["-inf", "−inf", "-∞", "−∞", "-infinity", "−infinity"]);
// What Python's float() reads once lowered: decimal with optional '_' between digits, exponent, inf, nan.
const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:e[+-]?\d(?:_?\d)*)?$/;
const PY_SPECIAL = /^[+-]?(?:inf|infinity|nan)$/;
const FULLWIDTH_DIGIT = /[\uff10-\uff19]/g; // Python's float() reads them as 0-9

function pyFloat(word: string): number | null {
  const w = word.replace(FULLWIDTH_DIGIT, (d) => String(d.charCodeAt(0) - 0xff10));
  if (PY_SPECIAL.test(w)) return w.includes("nan") ? NaN : w.startsWith("-") ? -Infinity : Infinity;
  if (!PY_FLOAT.test(w)) return null;
  return Number(w.replace(/_/g, ""));
}

/** parse_number: one number as typed; "-inf" and "−∞" mean minus infinity. */
export function parseNumber(text: string): number {
  const word = text.trim().toLowerCase().replace(/＋/g, "+");
  if (NEG_INF_WORDS.has(word)) return -Infinity;
  const value = pyFloat(word.replace(/−/g, "-"));
  if (value === null) throw new InputProblem("not_a_number");
  if (isNaN(value) || value === Infinity) throw new InputProblem("not_finite");
  if (value === -Infinity) return -Infinity;
  if (Math.abs(value) > MAX_ABS_VALUE) throw new InputProblem("too_large");
  return value;
}

const STRIP_CHARS = "[]()（）【】";
function stripChars(text: string, chars: string): string {
  let a = 0, b = text.length;
  while (a < b && chars.includes(text[a])) a++;
  while (b > a && chars.includes(text[b - 1])) b--;
  return text.slice(a, b);
}

/** parse_vector: numbers separated by commas, spaces or semicolons (brackets allowed). */
export function parseVector(text: string, maxLen = MAX_TOKENS): number[] {
  const body = stripChars(text.trim(), STRIP_CHARS).trim();
  if (!body) throw new InputProblem("empty");
  const parts = body.split(/[,\s，;；]+/).filter((p) => p);
  if (parts.length > maxLen) throw new InputProblem("too_many");
  return parts.map(parseNumber);
}

function checkScores(row: number[]): void {
  if (row.length === 0) throw new InputProblem("empty");
  if (row.some((v) => isNaN(v) || v === Infinity)) throw new InputProblem("not_finite");
  if (row.every((v) => v === -Infinity)) throw new InputProblem("all_masked");
}

/** numeric.softmax of one row: shifted by its max, exp(−∞) = 0. */
export function softmax(row: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i]);
  const e = Array.from(row, (v) => Math.exp(v - max));
  const total = pairwiseSum(e);
  return e.map((v) => v / total);
}

/** numpy's sum of a short row (≤ 8 terms: left to right; longer: eight partial sums, then pairs). */
export function pairwiseSum(values: number[]): number {
  const n = values.length;
  if (n < 8) {
    let s = 0;
    for (const v of values) s += v;
    return s;
  }
  if (n <= 128) {
    const r = values.slice(0, 8);
    let i = 8;
    for (; i + 8 <= n; i += 8) for (let j = 0; j < 8; j++) r[j] += values[i + j];
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += values[i];
    return res;
  }
  const half = Math.floor(n / 2) - (Math.floor(n / 2) % 8);
  return pairwiseSum(values.slice(0, half)) + pairwiseSum(values.slice(half));
}

export interface SoftmaxSteps { scores: number[]; shift: number; exps: number[]; total: number; weights: number[] }

/** softmax_steps: e^x, their sum, each e^x over the sum (shifted only past 50). */
export function softmaxSteps(row: number[]): SoftmaxSteps {
  checkScores(row);
  const top = Math.max(...row);
  const shift = top > 50 ? top : 0;
  const exps = row.map((v) => Math.exp(v - shift));
  const total = pairwiseSum(exps);
  return { scores: row, shift, exps, total, weights: exps.map((e) => e / total) };
}

export interface PlainNormalisation { total: number; weights: number[] | null; problem: string | null }

/** plain_normalise: x / Σx, or why it cannot. */
export function plainNormalise(row: number[]): PlainNormalisation {
  if (row.length === 0) throw new InputProblem("empty");
  if (row.some((v) => isNaN(v) || v === Infinity)) throw new InputProblem("not_finite");
  if (row.some((v) => v === -Infinity)) return { total: -Infinity, weights: null, problem: "masked" };
  const total = pairwiseSum(row);
  const biggest = Math.max(...row.map(Math.abs));
  if (Math.abs(total) <= 1e-12 * Math.max(1, biggest)) return { total: 0, weights: null, problem: "division_by_zero" };
  const weights = row.map((v) => v / total);
  return { total, weights, problem: weights.some((w) => w < 0) ? "negative" : null };
}

export interface AttentionRest {
  divisor: number;
  scaled: number[][];
  masked: number[][];
  weights: number[][];
  output: number[][];
}

/** Steps 3-6 of attention_steps from Q·Kᵀ and V: ÷√d_k, the causal mask, softmax, weights·V. */
export function attentionRest(scores: number[][], v: number[][], dK: number, scale: boolean, causal: boolean): AttentionRest {
  const divisor = scale ? Math.sqrt(dK) : 1;
  const scaled = scores.map((row) => row.map((s) => s / divisor));
  const masked = scaled.map((row, i) => row.map((s, j) => (causal && j > i ? -Infinity : s)));
  const weights = masked.map(softmax);
  const output = weights.map((w) => v[0].map((_, c) => {
    let s = 0;
    for (let j = 0; j < w.length; j++) s += w[j] * v[j][c];
    return s;
  }));
  return { divisor, scaled, masked, weights, output };
}

export interface MultiHead {
  nHeads: number;
  dHead: number;
  q: number[][][]; // (head, n, d_head): with identity W, each head's slice of X (Q = K = V)
  weights: number[][][]; // (head, n, n)
  concat: number[][]; // (n, d)
  output: number[][]; // (n, d) = concat · W_O
  single: number[][]; // one big head's weights (n, n)
}

function matmul(a: number[][], b: number[][]): number[][] {
  return a.map((row) => b[0].map((_, c) => {
    let s = 0;
    for (let j = 0; j < row.length; j++) s += row[j] * b[j][c];
    return s;
  }));
}
const transpose = (m: number[][]) => m[0].map((_, c) => m.map((row) => row[c]));

/** multi_head_steps with W_Q = W_K = W_V = identity (the seeds' example) and the given W_O. */
export function multiHead(x: number[][], nHeads: number, wO: number[][], scale: boolean, causal: boolean): MultiHead {
  const d = x[0].length;
  const dHead = d / nHeads;
  const q = Array.from({ length: nHeads }, (_, h) => x.map((row) => row.slice(h * dHead, (h + 1) * dHead)));
  const heads = q.map((slice) => attentionRest(matmul(slice, transpose(slice)), slice, dHead, scale, causal));
  const concat = x.map((_, i) => heads.flatMap((r) => r.output[i]));
  const single = attentionRest(matmul(x, transpose(x)), x, d, scale, causal);
  return { nHeads, dHead, q, weights: heads.map((r) => r.weights), concat, output: matmul(concat, wO), single: single.weights };
}
