// A port of core/lessons/kv_memory.py (the cache's size, MHA / GQA / MQA, the growth with the
// context, format_bytes) in exact BigInt bytes; tests/unit/test_calculators_math.py runs this
// file's bundle with Node against the Python on random inputs.
//   bytes per layer = 2 (K and V) × batch × tokens × kv_heads × head_dim × bits / 8

import { ratio, roundHalfEven } from "./exact";
import { pyFixed, pyG } from "../lessons/format";

export const DTYPE_BITS: Record<string, number> = { fp32: 32, fp16: 16, bf16: 16, fp8: 8, int8: 8, int4: 4 };
export const MAX_TOKENS = 1_000_000_000; // kv_memory.MAX_TOKENS

export interface KVCacheMemory {
  n_layer: number; n_kv_head: number; d_head: number; n_tokens: number; batch: number; dtype: string;
  bytesPerTokenPerLayer: bigint; bytesPerLayer: bigint; totalBytes: bigint; bytesPerToken: bigint;
}

export function kvCacheMemory(n_layer: number, n_kv_head: number, d_head: number, n_tokens: number, batch: number,
                              dtype: string): KVCacheMemory {
  const bits = DTYPE_BITS[dtype];
  if (bits === undefined) throw new RangeError(`unknown dtype ${dtype}`);
  const perTokenPerLayer = (2n * BigInt(n_kv_head) * BigInt(d_head) * BigInt(bits)) / 8n; // K and V: the 2
  const perLayer = BigInt(batch) * BigInt(n_tokens) * perTokenPerLayer;
  return {
    n_layer, n_kv_head, d_head, n_tokens, batch, dtype,
    bytesPerTokenPerLayer: perTokenPerLayer, bytesPerLayer: perLayer, totalBytes: BigInt(n_layer) * perLayer,
    bytesPerToken: perTokenPerLayer * BigInt(n_layer),
  };
}

const DECIMAL_UNITS: [string, bigint][] = [["PB", 10n ** 15n], ["TB", 10n ** 12n], ["GB", 10n ** 9n], ["MB", 10n ** 6n], ["kB", 1000n]];

/** format_bytes(n): decimal units as the textbook writes them ("40.96 MB"). */
export function formatBytes(n: bigint, digits = 2): string {
  for (const [unit, size] of DECIMAL_UNITS) if (n >= size) return `${pyFixed(ratio(n, size), digits)} ${unit}`;
  return `${pyG(Number(n), 6)} B`;
}

/** head_sharing_kind: "MHA", "GQA", "MQA", or null when the query heads cannot be split evenly. */
export function headSharingKind(n_head: number, n_kv_head: number): "MHA" | "GQA" | "MQA" | null {
  if (n_kv_head > n_head || n_head % n_kv_head) return null;
  if (n_kv_head === n_head) return "MHA";
  return n_kv_head === 1 ? "MQA" : "GQA";
}

export function gqaChoices(n_head: number): number[] {
  const out: number[] = [];
  for (let d = 2; d < n_head; d++) if (n_head % d === 0) out.push(d);
  return out;
}

export interface SharingVariant { kind: string; n_kv_head: number; queriesPerKvHead: number; memory: KVCacheMemory; savingVsMha: number }

export function compareHeadSharing(n_layer: number, n_head: number, gqa: number | null, d_head: number, n_tokens: number,
                                   batch: number, dtype: string): SharingVariant[] {
  const layouts: [string, number][] = [["MHA", n_head]];
  if (gqa !== null) {
    if (headSharingKind(n_head, gqa) !== "GQA") throw new RangeError(`GQA needs a divisor of ${n_head}, got ${gqa}`);
    layouts.push(["GQA", gqa]);
  }
  if (n_head > 1) layouts.push(["MQA", 1]);
  const mha = kvCacheMemory(n_layer, n_head, d_head, n_tokens, batch, dtype);
  return layouts.map(([kind, kv]) => {
    const memory = kvCacheMemory(n_layer, kv, d_head, n_tokens, batch, dtype);
    return { kind, n_kv_head: kv, queriesPerKvHead: Math.floor(n_head / kv), memory,
             savingVsMha: ratio(mha.totalBytes, memory.totalBytes) };
  });
}

/** The page's GQA row: the chosen K/V heads when the layout is GQA, else about a quarter of the
 *  query heads keep their own K/V (the largest divisor ≤ n_head // 4, else the smallest one). */
export function typicalGqa(layout: string, n_head: number, n_kv_head: number): number | null {
  if (layout === "GQA") return n_kv_head;
  const choices = gqaChoices(n_head);
  const fitting = choices.filter((c) => c <= Math.floor(n_head / 4));
  return fitting.length ? Math.max(...fitting) : choices.length ? choices[0] : null;
}

/** default_contexts: from 1/8 to 8× the chosen context, doubling (round() as Python: ties to even). */
export function defaultContexts(n_tokens: number, points = 9): number[] {
  const half = Math.floor(points / 2);
  const out: number[] = [];
  for (let step = -half; step < points - half; step++) {
    const n = roundHalfEven(n_tokens * Math.pow(2, step));
    if (n >= 1 && n <= MAX_TOKENS) out.push(n);
  }
  return out;
}

export function totalBytesByContext(n_layer: number, n_kv_head: number, d_head: number, contexts: number[], batch: number,
                                    dtype: string): bigint[] {
  return contexts.map((n) => kvCacheMemory(n_layer, n_kv_head, d_head, n, batch, dtype).totalBytes);
}
