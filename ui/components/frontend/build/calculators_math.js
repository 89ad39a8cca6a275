// Token Journey: the calculators' math (src/calculators_math.ts) for the unit tests, built by build.mjs (do not edit).


// src/calculators/param_count.ts
var COMPONENTS = ["token_embedding", "position_embedding", "attention", "ffn", "router", "norms", "lm_head"];
var LAYER_PARTS = ["attention", "ffn", "router", "norms"];
var POSITIONAL = ["learned", "sinusoidal", "rope"];
var NORMS = ["layernorm", "rmsnorm"];
var FFNS = ["gelu", "swiglu"];
var WHOLE = ["vocab", "d_model", "n_layer", "n_head", "n_kv_head", "d_ff", "n_ctx", "n_experts", "n_active"];
function problem(spec) {
  for (const field of WHOLE) {
    const v = spec[field];
    if (!Number.isSafeInteger(v) || v <= 0) return { code: "positive", field };
  }
  const shared = spec.n_shared ?? 0;
  if (!Number.isSafeInteger(shared) || shared < 0) return { code: "positive", field: "n_shared" };
  if (spec.d_model % spec.n_head) return { code: "d_model_heads", d_model: spec.d_model, n_head: spec.n_head };
  if (spec.n_head % spec.n_kv_head) return { code: "heads_kv", n_head: spec.n_head, n_kv_head: spec.n_kv_head };
  if (spec.n_active > spec.n_experts) return { code: "active_experts", n_active: spec.n_active, n_experts: spec.n_experts };
  if (!POSITIONAL.includes(spec.positional)) return { code: "kind", field: "positional" };
  if (!NORMS.includes(spec.norm)) return { code: "kind", field: "norm" };
  if (!FFNS.includes(spec.ffn)) return { code: "kind", field: "ffn" };
  return null;
}
function ffnParams(spec) {
  const d = BigInt(spec.d_model), f = BigInt(spec.d_ff), b = spec.bias ? 1n : 0n;
  if (spec.ffn === "gelu") return d * f + f * b + f * d + d * b;
  return 3n * d * f + (2n * f + d) * b;
}
function countParameters(spec) {
  const d = BigInt(spec.d_model), b = spec.bias ? 1n : 0n;
  const L = BigInt(spec.n_layer), vocab = BigInt(spec.vocab);
  const dHead = BigInt(Math.floor(spec.d_model / spec.n_head));
  const kv = BigInt(spec.n_kv_head) * dHead;
  const attention = d * d + 2n * d * kv + d * d + (d + 2n * kv + d) * b;
  const oneFfn = ffnParams(spec);
  const experts = BigInt(spec.n_experts + (spec.n_shared ?? 0));
  const ffn = oneFfn * experts;
  const router = spec.n_experts > 1 ? d * BigInt(spec.n_experts) : 0n;
  const oneNorm = d + (spec.norm === "layernorm" && spec.bias ? d : 0n);
  const perLayer = { attention, ffn, router, norms: 2n * oneNorm };
  const components = {
    token_embedding: vocab * d,
    position_embedding: spec.positional === "learned" ? BigInt(spec.n_ctx) * d : 0n,
    attention: attention * L,
    ffn: ffn * L,
    router: router * L,
    norms: 2n * oneNorm * L + oneNorm,
    // two per layer and the final one
    lm_head: spec.tied ? 0n : vocab * d
  };
  const total = COMPONENTS.reduce((sum, c) => sum + components[c], 0n);
  const unused = spec.n_experts > 1 ? oneFfn * BigInt(spec.n_experts - spec.n_active) * L : 0n;
  return { components, total, active: total - unused, perLayer };
}

// src/calculators/exact.ts
function ratio(a, b) {
  if (b <= 0n) throw new RangeError("ratio: the divisor must be positive");
  if (a === 0n) return 0;
  const negative = a < 0n;
  const n = negative ? -a : a;
  const shift = BigInt(Math.max(0, 62 - (n.toString(2).length - b.toString(2).length)));
  const scaled = n << shift;
  const q = scaled / b;
  const sticky = scaled % b === 0n ? 0n : 1n;
  const value = Number(q << 1n | sticky) / Math.pow(2, Number(shift) + 1);
  return negative ? -value : value;
}
function commas(n) {
  const text = (typeof n === "bigint" ? n : BigInt(n)).toString();
  const negative = text.startsWith("-");
  const digits = negative ? text.slice(1) : text;
  return (negative ? "-" : "") + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
function roundHalfEven(x) {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

// src/lessons/format.ts
function roundDigits(digits, point, keep) {
  const cut = point + keep;
  if (cut >= digits.length) return { digits: digits.padEnd(cut, "0"), point };
  if (cut < 0) return { digits: "0".repeat(point + keep > 0 ? point + keep : 0), point };
  const head = digits.slice(0, cut);
  const rest = digits.slice(cut);
  const first = rest.charCodeAt(0) - 48;
  const tail = /[1-9]/.test(rest.slice(1));
  const last = cut > 0 ? head.charCodeAt(cut - 1) - 48 : 0;
  const up = first > 5 || first === 5 && (tail || last % 2 === 1);
  if (!up) return { digits: head, point };
  const out = head.split("");
  let i = out.length - 1;
  while (i >= 0 && out[i] === "9") {
    out[i] = "0";
    i--;
  }
  if (i >= 0) {
    out[i] = String.fromCharCode(out[i].charCodeAt(0) + 1);
    return { digits: out.join(""), point };
  }
  return { digits: "1" + out.join(""), point: point + 1 };
}
function expansion(x) {
  const text = Math.abs(x).toFixed(100);
  const [whole, frac] = text.split(".");
  return { negative: x < 0 || Object.is(x, -0), digits: whole + frac, point: whole.length };
}
function pyFixed(x, decimals) {
  if (!isFinite(x)) return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (Math.abs(x) >= 1e21) return x.toFixed(decimals);
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
function pyG(x, p) {
  if (!isFinite(x)) return isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const sign = x < 0 ? "-" : "";
  const e = expansion(x);
  const lead = e.digits.search(/[1-9]/);
  let exp = e.point - lead - 1;
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

// src/calculators/kv_memory.ts
var DTYPE_BITS = { fp32: 32, fp16: 16, bf16: 16, fp8: 8, int8: 8, int4: 4 };
var MAX_TOKENS = 1e9;
function kvCacheMemory(n_layer, n_kv_head, d_head, n_tokens, batch, dtype) {
  const bits = DTYPE_BITS[dtype];
  if (bits === void 0) throw new RangeError(`unknown dtype ${dtype}`);
  const perTokenPerLayer = 2n * BigInt(n_kv_head) * BigInt(d_head) * BigInt(bits) / 8n;
  const perLayer = BigInt(batch) * BigInt(n_tokens) * perTokenPerLayer;
  return {
    n_layer,
    n_kv_head,
    d_head,
    n_tokens,
    batch,
    dtype,
    bytesPerTokenPerLayer: perTokenPerLayer,
    bytesPerLayer: perLayer,
    totalBytes: BigInt(n_layer) * perLayer,
    bytesPerToken: perTokenPerLayer * BigInt(n_layer)
  };
}
var DECIMAL_UNITS = [["PB", 10n ** 15n], ["TB", 10n ** 12n], ["GB", 10n ** 9n], ["MB", 10n ** 6n], ["kB", 1000n]];
function formatBytes(n, digits = 2) {
  for (const [unit, size] of DECIMAL_UNITS) if (n >= size) return `${pyFixed(ratio(n, size), digits)} ${unit}`;
  return `${pyG(Number(n), 6)} B`;
}
function headSharingKind(n_head, n_kv_head) {
  if (n_kv_head > n_head || n_head % n_kv_head) return null;
  if (n_kv_head === n_head) return "MHA";
  return n_kv_head === 1 ? "MQA" : "GQA";
}
function gqaChoices(n_head) {
  const out = [];
  for (let d = 2; d < n_head; d++) if (n_head % d === 0) out.push(d);
  return out;
}
function compareHeadSharing(n_layer, n_head, gqa, d_head, n_tokens, batch, dtype) {
  const layouts = [["MHA", n_head]];
  if (gqa !== null) {
    if (headSharingKind(n_head, gqa) !== "GQA") throw new RangeError(`GQA needs a divisor of ${n_head}, got ${gqa}`);
    layouts.push(["GQA", gqa]);
  }
  if (n_head > 1) layouts.push(["MQA", 1]);
  const mha = kvCacheMemory(n_layer, n_head, d_head, n_tokens, batch, dtype);
  return layouts.map(([kind, kv]) => {
    const memory = kvCacheMemory(n_layer, kv, d_head, n_tokens, batch, dtype);
    return {
      kind,
      n_kv_head: kv,
      queriesPerKvHead: Math.floor(n_head / kv),
      memory,
      savingVsMha: ratio(mha.totalBytes, memory.totalBytes)
    };
  });
}
function typicalGqa(layout, n_head, n_kv_head) {
  if (layout === "GQA") return n_kv_head;
  const choices = gqaChoices(n_head);
  const fitting = choices.filter((c) => c <= Math.floor(n_head / 4));
  return fitting.length ? Math.max(...fitting) : choices.length ? choices[0] : null;
}
function defaultContexts(n_tokens, points = 9) {
  const half = Math.floor(points / 2);
  const out = [];
  for (let step = -half; step < points - half; step++) {
    const n = roundHalfEven(n_tokens * Math.pow(2, step));
    if (n >= 1 && n <= MAX_TOKENS) out.push(n);
  }
  return out;
}
function totalBytesByContext(n_layer, n_kv_head, d_head, contexts, batch, dtype) {
  return contexts.map((n) => kvCacheMemory(n_layer, n_kv_head, d_head, n, batch, dtype).totalBytes);
}

// src/calculators/display.ts
function paramsShown(spec) {
  const count = countParameters(spec);
  const ffnShare = ratio(count.components.ffn, count.total);
  const rows = COMPONENTS.filter((p) => count.components[p] > 0n).map((p) => ({
    part: p,
    count: commas(count.components[p]),
    value: Number(count.components[p]),
    share: `${pyFixed(ratio(100n * count.components[p], count.total), 2)}\xA0%`
    // 100 * c / total: int / int
  }));
  const pl = count.perLayer;
  const inLayer = pl.attention + pl.ffn + pl.router + pl.norms;
  return {
    count,
    total: commas(count.total),
    active: commas(count.active),
    ffnShare: `${pyFixed(100 * ffnShare, 1)} %`,
    rows,
    layer: {
      attn: commas(pl.attention),
      ffn: commas(pl.ffn),
      norms: commas(pl.norms),
      layer: commas(inLayer),
      ffn_layer: pyFixed(ratio(100n * pl.ffn, inLayer), 1),
      attn_layer: pyFixed(ratio(100n * pl.attention, inLayer), 1),
      ffn_all: pyFixed(100 * ffnShare, 1)
    },
    layerParts: LAYER_PARTS.filter((p) => pl[p] > 0n).map((p) => ({ part: p, count: commas(pl[p]), value: Number(pl[p]) }))
  };
}
function kvShown(k) {
  const m = kvCacheMemory(k.n_layer, k.n_kv_head, k.d_head, k.n_tokens, k.batch, k.dtype);
  const kind = headSharingKind(k.n_head, k.n_kv_head);
  const shown = {
    perLayer: formatBytes(m.bytesPerLayer),
    perLayerExact: commas(m.bytesPerLayer),
    total: formatBytes(m.totalBytes),
    totalExact: commas(m.totalBytes),
    perToken: formatBytes(m.bytesPerToken),
    formula: {
      batch: k.batch,
      tokens: commas(k.n_tokens),
      kv: k.n_kv_head,
      d: k.d_head,
      bytes: pyG(DTYPE_BITS[k.dtype] / 8, 6),
      per_layer: formatBytes(m.bytesPerLayer),
      layers: k.n_layer,
      total: formatBytes(m.totalBytes),
      gib: pyFixed(ratio(m.totalBytes, 2n ** 30n), 2)
    },
    layout: kind === null ? null : { kind, share: Math.floor(k.n_head / k.n_kv_head) },
    variants: [],
    contexts: [],
    growth: []
  };
  if (kind === null) return shown;
  const variants = compareHeadSharing(
    k.n_layer,
    k.n_head,
    typicalGqa(kind, k.n_head, k.n_kv_head),
    k.d_head,
    k.n_tokens,
    k.batch,
    k.dtype
  );
  shown.variants = variants.map((v) => ({
    kind: v.kind,
    n_kv_head: v.n_kv_head,
    share: v.queriesPerKvHead,
    perLayer: formatBytes(v.memory.bytesPerLayer),
    total: formatBytes(v.memory.totalBytes),
    totalBytes: Number(v.memory.totalBytes),
    saving: pyG(v.savingVsMha, 6)
  }));
  shown.contexts = defaultContexts(k.n_tokens);
  shown.growth = variants.map((v) => {
    const bytes = totalBytesByContext(k.n_layer, v.n_kv_head, k.d_head, shown.contexts, k.batch, k.dtype);
    return { kind: v.kind, n_kv_head: v.n_kv_head, bytes: bytes.map(Number), shown: bytes.map((b) => formatBytes(b)) };
  });
  return shown;
}
export {
  countParameters,
  defaultContexts,
  formatBytes,
  kvCacheMemory,
  kvShown,
  paramsShown,
  problem,
  ratio
};
