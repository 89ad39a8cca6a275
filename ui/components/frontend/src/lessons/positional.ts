// The positional-encoding math of core/lessons/positional.py, step for step in float64, so the
// page's knobs redraw in the browser with the same numbers (tests/e2e/test_positional_encoding.py
// compares them with the Python functions on random cases).
//
//   ω_k = base^(−2k/d)                   PE(pos, 2k) = sin(pos·ω_k), PE(pos, 2k+1) = cos(pos·ω_k)
//   M_k = blocks [[cos kω, sin kω], [−sin kω, cos kω]]   so PE(pos + k) = M_k · PE(pos)
//   RoPE rotates each pair (x_2i, x_2i+1) of q and k counter-clockwise by position · θ_i.

/** ω_k = base^(−2k/d) for k = 0 … d/2 − 1 (pair_frequencies). */
export function pairFrequencies(dModel: number, base: number): Float64Array {
  const half = dModel / 2;
  const out = new Float64Array(half);
  for (let k = 0; k < half; k++) out[k] = Math.pow(base, -(2 * k) / dModel);
  return out;
}

/** base^(2k/d) = 1 / ω_k (pair_divisors). */
export function pairDivisors(dModel: number, base: number): Float64Array {
  return pairFrequencies(dModel, base).map((w) => 1 / w);
}

/** 2π · base^(2k/d): positions per cycle of pair k (pair_periods). */
export function pairPeriods(dModel: number, base: number): Float64Array {
  return pairDivisors(dModel, base).map((d) => 2 * Math.PI * d);
}

/** One position's encoding (sinusoidal_vector). */
export function sinusoidalVector(position: number, dModel: number, base: number): Float64Array {
  const omega = pairFrequencies(dModel, base);
  const out = new Float64Array(dModel);
  for (let k = 0; k < omega.length; k++) {
    const angle = position * omega[k];
    out[2 * k] = Math.sin(angle);
    out[2 * k + 1] = Math.cos(angle);
  }
  return out;
}

/** The table [n_positions, d_model], row-major (sinusoidal_table). */
export function sinusoidalTable(nPositions: number, dModel: number, base: number): Float64Array {
  const omega = pairFrequencies(dModel, base);
  const out = new Float64Array(nPositions * dModel);
  for (let p = 0; p < nPositions; p++) {
    for (let k = 0; k < omega.length; k++) {
      const angle = p * omega[k];
      out[p * dModel + 2 * k] = Math.sin(angle);
      out[p * dModel + 2 * k + 1] = Math.cos(angle);
    }
  }
  return out;
}

/** M_k [d, d], row-major (relative_shift_matrix). */
export function relativeShiftMatrix(offset: number, dModel: number, base: number): Float64Array {
  const omega = pairFrequencies(dModel, base);
  const m = new Float64Array(dModel * dModel);
  for (let j = 0; j < omega.length; j++) {
    const angle = offset * omega[j];
    const c = Math.cos(angle), s = Math.sin(angle);
    const r = 2 * j;
    m[r * dModel + r] = c; m[r * dModel + r + 1] = s;
    m[(r + 1) * dModel + r] = -s; m[(r + 1) * dModel + r + 1] = c;
  }
  return m;
}

export interface RelativeCheck {
  pePosition: Float64Array; // PE(pos)
  peTarget: Float64Array; // PE(pos + k), computed directly
  rotated: Float64Array; // M_k · PE(pos)
  matrix: Float64Array; // M_k, row-major
  maxAbsError: number;
}

/** PE(pos + k) both ways (check_relative_position); the caller keeps 0 ≤ pos + k. */
export function checkRelativePosition(position: number, offset: number, dModel: number, base: number): RelativeCheck {
  const matrix = relativeShiftMatrix(offset, dModel, base);
  const start = sinusoidalVector(position, dModel, base);
  const rotated = new Float64Array(dModel);
  for (let r = 0; r < dModel; r++) {
    let sum = 0;
    for (let c = 0; c < dModel; c++) sum += matrix[r * dModel + c] * start[c];
    rotated[r] = sum;
  }
  const target = sinusoidalVector(position + offset, dModel, base);
  let err = 0;
  for (let i = 0; i < dModel; i++) err = Math.max(err, Math.abs(rotated[i] - target[i]));
  return { pePosition: start, peTarget: target, rotated, matrix, maxAbsError: err };
}

/** Each pair turned by position · θ_i, counter-clockwise (rope_rotate). */
export function ropeRotate(x: ArrayLike<number>, position: number, theta: ArrayLike<number>): Float64Array {
  const out = new Float64Array(2 * theta.length);
  for (let i = 0; i < theta.length; i++) {
    const angle = position * theta[i];
    const c = Math.cos(angle), s = Math.sin(angle);
    const even = x[2 * i], odd = x[2 * i + 1];
    out[2 * i] = even * c - odd * s;
    out[2 * i + 1] = even * s + odd * c;
  }
  return out;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** rot(q, m) · rot(k, m − Δ) per query position (rows) and Δ = 0 … maxOffset; NaN before position 0. */
export function ropeScoresByOffset(q: ArrayLike<number>, k: ArrayLike<number>, theta: ArrayLike<number>,
                                   queryPositions: number[], maxOffset: number): number[][] {
  return queryPositions.map((m) => {
    const rq = ropeRotate(q, m, theta);
    const row: number[] = [];
    for (let d = 0; d <= maxOffset; d++) row.push(m - d >= 0 ? dot(rq, ropeRotate(k, m - d, theta)) : NaN);
    return row;
  });
}

/** IEEE remainder (Python's math.remainder): x − n·y with n the nearest integer, ties to even. */
export function remainder(x: number, y: number): number {
  const q = x / y;
  let n = Math.round(q);
  if (Math.abs(q - Math.trunc(q)) === 0.5) n = 2 * Math.round(q / 2);
  return x - n * y;
}

function wrap(angle: number): number {
  const w = remainder(angle, 2 * Math.PI);
  return w === -Math.PI ? Math.PI : w;
}

export interface PairRotation {
  q: [number, number]; k: [number, number];
  qRotated: [number, number]; kRotated: [number, number];
  angleBefore: number; angleAfter: number;
}

/** q's pair turned by m·θ, k's by n·θ (rope_pair_picture). */
export function ropePairPicture(q: [number, number], k: [number, number], m: number, n: number, theta: number): PairRotation {
  const qr = ropeRotate(q, m, [theta]);
  const kr = ropeRotate(k, n, [theta]);
  const ang = (v: ArrayLike<number>) => Math.atan2(v[1], v[0]);
  return {
    q, k, qRotated: [qr[0], qr[1]], kRotated: [kr[0], kr[1]],
    angleBefore: wrap(ang(q) - ang(k)), angleAfter: wrap(ang(qr) - ang(kr)),
  };
}
