// A port of core/lessons/param_count.py's count_parameters and ArchSpec's checks, in exact BigInt
// arithmetic (tests/unit/test_calculators_math.py runs this file's bundle with Node against the
// Python on random configs). Counts follow the real layer shapes: Q and O are d × d, K and V are
// d × (n_kv_head · d_head), a GELU FFN has two matrices and a SwiGLU FFN three, LayerNorm has
// gamma and beta, RMSNorm gamma only, a tied LM head reuses the token embedding, an MoE layer
// holds n_experts FFNs (+ shared ones) and a router, of which n_active (+ shared) run per token.

export const COMPONENTS = ["token_embedding", "position_embedding", "attention", "ffn", "router", "norms", "lm_head"] as const;
export type Component = (typeof COMPONENTS)[number];
export const LAYER_PARTS = ["attention", "ffn", "router", "norms"] as const;
export type LayerPart = (typeof LAYER_PARTS)[number];

export const POSITIONAL = ["learned", "sinusoidal", "rope"] as const;
export const NORMS = ["layernorm", "rmsnorm"] as const;
export const FFNS = ["gelu", "swiglu"] as const;

export interface ArchSpec {
  vocab: number; d_model: number; n_layer: number; n_head: number; n_kv_head: number; d_ff: number; n_ctx: number;
  positional: string; norm: string; ffn: string; tied: boolean; bias: boolean;
  n_experts: number; n_active: number; n_shared?: number;
}

export interface ParamCount {
  components: Record<Component, bigint>;
  total: bigint;
  active: bigint;
  perLayer: Record<LayerPart, bigint>;
}

/** Why a spec is impossible, as a code with its numbers (the page words it), or null when it is fine. */
export type Problem =
  | { code: "positive"; field: string }
  | { code: "d_model_heads"; d_model: number; n_head: number }
  | { code: "heads_kv"; n_head: number; n_kv_head: number }
  | { code: "active_experts"; n_active: number; n_experts: number }
  | { code: "kind"; field: string };

const WHOLE = ["vocab", "d_model", "n_layer", "n_head", "n_kv_head", "d_ff", "n_ctx", "n_experts", "n_active"] as const;

/** ArchSpec.__post_init__'s checks, in its order. */
export function problem(spec: ArchSpec): Problem | null {
  for (const field of WHOLE) {
    const v = spec[field];
    if (!Number.isSafeInteger(v) || v <= 0) return { code: "positive", field };
  }
  const shared = spec.n_shared ?? 0;
  if (!Number.isSafeInteger(shared) || shared < 0) return { code: "positive", field: "n_shared" };
  if (spec.d_model % spec.n_head) return { code: "d_model_heads", d_model: spec.d_model, n_head: spec.n_head };
  if (spec.n_head % spec.n_kv_head) return { code: "heads_kv", n_head: spec.n_head, n_kv_head: spec.n_kv_head };
  if (spec.n_active > spec.n_experts) return { code: "active_experts", n_active: spec.n_active, n_experts: spec.n_experts };
  if (!(POSITIONAL as readonly string[]).includes(spec.positional)) return { code: "kind", field: "positional" };
  if (!(NORMS as readonly string[]).includes(spec.norm)) return { code: "kind", field: "norm" };
  if (!(FFNS as readonly string[]).includes(spec.ffn)) return { code: "kind", field: "ffn" };
  return null;
}

function ffnParams(spec: ArchSpec): bigint {
  const d = BigInt(spec.d_model), f = BigInt(spec.d_ff), b = spec.bias ? 1n : 0n;
  if (spec.ffn === "gelu") return d * f + f * b + f * d + d * b;
  return 3n * d * f + (2n * f + d) * b;
}

/** count_parameters(spec); call `problem(spec)` first (a spec it rejects has no count). */
export function countParameters(spec: ArchSpec): ParamCount {
  const d = BigInt(spec.d_model), b = spec.bias ? 1n : 0n;
  const L = BigInt(spec.n_layer), vocab = BigInt(spec.vocab);
  const dHead = BigInt(Math.floor(spec.d_model / spec.n_head));
  const kv = BigInt(spec.n_kv_head) * dHead;
  const attention = d * d + 2n * d * kv + d * d + (d + 2n * kv + d) * b; // Q, K, V, O (+ biases)
  const oneFfn = ffnParams(spec);
  const experts = BigInt(spec.n_experts + (spec.n_shared ?? 0));
  const ffn = oneFfn * experts;
  const router = spec.n_experts > 1 ? d * BigInt(spec.n_experts) : 0n;
  const oneNorm = d + (spec.norm === "layernorm" && spec.bias ? d : 0n);
  const perLayer = { attention, ffn, router, norms: 2n * oneNorm };
  const components: Record<Component, bigint> = {
    token_embedding: vocab * d,
    position_embedding: spec.positional === "learned" ? BigInt(spec.n_ctx) * d : 0n,
    attention: attention * L,
    ffn: ffn * L,
    router: router * L,
    norms: 2n * oneNorm * L + oneNorm, // two per layer and the final one
    lm_head: spec.tied ? 0n : vocab * d,
  };
  const total = COMPONENTS.reduce((sum, c) => sum + components[c], 0n);
  const unused = spec.n_experts > 1 ? oneFfn * BigInt(spec.n_experts - spec.n_active) * L : 0n;
  return { components, total, active: total - unused, perLayer };
}

export function sameSpec(a: ArchSpec, b: ArchSpec): boolean {
  const keys: (keyof ArchSpec)[] = [...WHOLE, "positional", "norm", "ffn", "tied", "bias"];
  return keys.every((k) => a[k] === b[k]) && (a.n_shared ?? 0) === (b.n_shared ?? 0);
}
