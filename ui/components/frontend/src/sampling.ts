// Client-side sampling: the same steps and order as core/engine/sampling.py, so moving a knob
// redraws the bars without a server rerun.
//   1. temperature  softmax(logits / T); T = 0 puts all mass on the best logit
//   2. top-k        keep the k best logits (0 = off)
//   3. top-p        of what is left (renormalised), keep the smallest best-first set whose
//                   mass reaches p (1 = off); the best token always survives
//   4. renormalise
// `values` are logits sorted best first (lower id first among equals, as core does). The
// vocabulary beyond them is a histogram `tail` ([centre, count] pairs): it enters the
// softmax's denominator so probabilities are over the whole vocabulary; tail tokens rank
// after every sent token, so any top-k <= values.length or top-p < 1 that stops inside
// the sent ones removes them.

export interface Knobs {
  temperature: number;
  topK: number;
  topP: number;
}

export interface Distribution {
  tempered: number[]; // after temperature, before any cut (over the whole vocabulary)
  afterK: number[]; // tempered, top-k's survivors renormalised (core's after_top_k_probs)
  final: number[]; // after the cuts, renormalised
  kept: boolean[];
  cutBy: ("k" | "p" | null)[];
}

export function distribution(values: number[], tail: [number, number][], knobs: Knobs): Distribution {
  const n = values.length;
  const tempered = new Array<number>(n).fill(0);
  if (n === 0) return { tempered, afterK: [], final: [], kept: [], cutBy: [] };
  const max = values[0];
  let tailWeight = 0;
  if (knobs.temperature <= 0) {
    tempered[0] = 1;
  } else {
    let z = 0;
    for (let i = 0; i < n; i++) {
      tempered[i] = Math.exp((values[i] - max) / knobs.temperature);
      z += tempered[i];
    }
    for (const [centre, count] of tail) tailWeight += count * Math.exp((centre - max) / knobs.temperature);
    z += tailWeight;
    for (let i = 0; i < n; i++) tempered[i] /= z;
    tailWeight /= z;
  }
  const cutBy: ("k" | "p" | null)[] = new Array(n).fill(null);
  const k = Math.floor(knobs.topK);
  if (k > 0 && k < n) for (let i = k; i < n; i++) cutBy[i] = "k";
  const tailCutByK = k > 0 && k <= n;
  // renormalise after top-k, then walk best first for top-p
  let massK = 0;
  for (let i = 0; i < n; i++) if (!cutBy[i]) massK += tempered[i];
  const tailAfterK = tailCutByK ? 0 : tailWeight;
  massK += tailAfterK;
  const afterK = tempered.map((p, i) => (cutBy[i] ? 0 : p / massK));
  let tailKept = tailAfterK > 0;
  if (knobs.topP < 1) {
    let before = 0;
    for (let i = 0; i < n; i++) {
      if (cutBy[i]) continue;
      const p = tempered[i] / massK;
      if (before >= knobs.topP && i > 0) cutBy[i] = "p";
      before += p;
    }
    if (before >= knobs.topP) tailKept = false;
  }
  let kept = 0;
  for (let i = 0; i < n; i++) if (!cutBy[i]) kept += tempered[i];
  if (tailKept) kept += tailAfterK;
  const final = tempered.map((p, i) => (cutBy[i] ? 0 : p / kept));
  return { tempered, afterK, final, kept: cutBy.map((c) => c === null), cutBy };
}

// A small seeded generator (mulberry32): the same seed, prompt and knobs draw the same token.
export function uniform(seed: number): number {
  let a = (seed >>> 0) + 0x6d2b79f5;
  a = Math.imul(a ^ (a >>> 15), a | 1);
  a ^= a + Math.imul(a ^ (a >>> 7), a | 61);
  return ((a ^ (a >>> 14)) >>> 0) / 4294967296;
}

// Inverse-CDF draw among the first `pool` tokens (renormalised over them).
export function draw(final: number[], pool: number, u: number): number {
  const m = Math.min(pool, final.length);
  let total = 0;
  for (let i = 0; i < m; i++) total += final[i];
  if (total <= 0) return 0;
  let run = 0;
  for (let i = 0; i < m; i++) {
    run += final[i] / total;
    if (u < run) return i;
  }
  for (let i = m - 1; i >= 0; i--) if (final[i] > 0) return i;
  return 0;
}

// Shannon entropy in bits, as core.engine.sampling.entropy_bits (zeros skipped).
export function entropyBits(probs: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < probs.length; i++) if (probs[i] > 0) h -= probs[i] * Math.log2(probs[i]);
  return h + 0; // -0 -> 0
}

// The whole vocabulary's logits, ranked as core ranks them: best first, lower id first among
// equals. `order[r]` is the token id at rank r, `values[r]` its logit, `rankOf[id]` its rank.
export interface Ranked { order: Int32Array; values: number[]; rankOf: Int32Array }

export function rankLogits(logits: ArrayLike<number>): Ranked {
  const n = logits.length;
  const ids = Array.from({ length: n }, (_, i) => i);
  ids.sort((a, b) => logits[b] - logits[a] || a - b);
  const order = Int32Array.from(ids);
  const rankOf = new Int32Array(n);
  order.forEach((id, r) => (rankOf[id] = r));
  return { order, values: ids.map((id) => logits[id]), rankOf };
}

// Logits sent by Python as base64 little-endian float32 (ui/components/sampling_lab.py): the
// exact float32 values the model produced, widened to float64 as core does.
export function decodeLogits(base64: string): Float64Array {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const out = new Float64Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}
