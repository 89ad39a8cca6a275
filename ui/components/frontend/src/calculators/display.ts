// What the calculators print, as the Python pages printed it (f"{n:,}", f"{100 * a / b:.2f}",
// format_bytes, f"{x:g}"): one function per calculator, shared by the view and by the Node test
// that compares every string with the Python (tests/unit/test_calculators_math.py).

import { commas, ratio } from "./exact";
import {
  compareHeadSharing, defaultContexts, DTYPE_BITS, formatBytes, headSharingKind, kvCacheMemory, totalBytesByContext,
  typicalGqa,
} from "./kv_memory";
import { ArchSpec, COMPONENTS, Component, countParameters, LAYER_PARTS, LayerPart, ParamCount } from "./param_count";
import { pyFixed, pyG } from "../lessons/format";

export interface ParamsShown {
  count: ParamCount;
  total: string;
  active: string;
  ffnShare: string; // "66.4 %"
  rows: { part: Component; count: string; share: string; value: number }[]; // the non-empty components
  layer: { attn: string; ffn: string; norms: string; layer: string; ffn_layer: string; attn_layer: string; ffn_all: string };
  layerParts: { part: LayerPart; count: string; value: number }[];
}

export function paramsShown(spec: ArchSpec): ParamsShown {
  const count = countParameters(spec);
  const ffnShare = ratio(count.components.ffn, count.total); // count.components["ffn"] / count.total
  const rows = COMPONENTS.filter((p) => count.components[p] > 0n).map((p) => ({
    part: p, count: commas(count.components[p]), value: Number(count.components[p]),
    share: `${pyFixed(ratio(100n * count.components[p], count.total), 2)}\u00a0%`, // 100 * c / total: int / int
  }));
  const pl = count.perLayer;
  const inLayer = pl.attention + pl.ffn + pl.router + pl.norms;
  return {
    count, total: commas(count.total), active: commas(count.active), ffnShare: `${pyFixed(100 * ffnShare, 1)} %`, rows,
    layer: {
      attn: commas(pl.attention), ffn: commas(pl.ffn), norms: commas(pl.norms), layer: commas(inLayer),
      ffn_layer: pyFixed(ratio(100n * pl.ffn, inLayer), 1), attn_layer: pyFixed(ratio(100n * pl.attention, inLayer), 1),
      ffn_all: pyFixed(100 * ffnShare, 1),
    },
    layerParts: LAYER_PARTS.filter((p) => pl[p] > 0n).map((p) => ({ part: p, count: commas(pl[p]), value: Number(pl[p]) })),
  };
}

export interface KvInputs { n_layer: number; n_head: number; n_kv_head: number; d_head: number; n_tokens: number; batch: number; dtype: string }

export interface KvShown {
  perLayer: string; perLayerExact: string; total: string; totalExact: string; perToken: string;
  formula: { batch: number; tokens: string; kv: number; d: number; bytes: string; per_layer: string; layers: number; total: string; gib: string };
  layout: { kind: string; share: number } | null; // null: the query heads do not split evenly
  variants: { kind: string; n_kv_head: number; share: number; perLayer: string; total: string; totalBytes: number; saving: string }[];
  contexts: number[];
  growth: { kind: string; n_kv_head: number; bytes: number[]; shown: string[] }[];
}

export function kvShown(k: KvInputs): KvShown {
  const m = kvCacheMemory(k.n_layer, k.n_kv_head, k.d_head, k.n_tokens, k.batch, k.dtype);
  const kind = headSharingKind(k.n_head, k.n_kv_head);
  const shown: KvShown = {
    perLayer: formatBytes(m.bytesPerLayer), perLayerExact: commas(m.bytesPerLayer),
    total: formatBytes(m.totalBytes), totalExact: commas(m.totalBytes), perToken: formatBytes(m.bytesPerToken),
    formula: {
      batch: k.batch, tokens: commas(k.n_tokens), kv: k.n_kv_head, d: k.d_head, bytes: pyG(DTYPE_BITS[k.dtype] / 8, 6),
      per_layer: formatBytes(m.bytesPerLayer), layers: k.n_layer, total: formatBytes(m.totalBytes),
      gib: pyFixed(ratio(m.totalBytes, 2n ** 30n), 2),
    },
    layout: kind === null ? null : { kind, share: Math.floor(k.n_head / k.n_kv_head) },
    variants: [], contexts: [], growth: [],
  };
  if (kind === null) return shown;
  const variants = compareHeadSharing(k.n_layer, k.n_head, typicalGqa(kind, k.n_head, k.n_kv_head), k.d_head, k.n_tokens,
                                      k.batch, k.dtype);
  shown.variants = variants.map((v) => ({
    kind: v.kind, n_kv_head: v.n_kv_head, share: v.queriesPerKvHead, perLayer: formatBytes(v.memory.bytesPerLayer),
    total: formatBytes(v.memory.totalBytes), totalBytes: Number(v.memory.totalBytes), saving: pyG(v.savingVsMha, 6),
  }));
  shown.contexts = defaultContexts(k.n_tokens);
  shown.growth = variants.map((v) => {
    const bytes = totalBytesByContext(k.n_layer, v.n_kv_head, k.d_head, shown.contexts, k.batch, k.dtype);
    return { kind: v.kind, n_kv_head: v.n_kv_head, bytes: bytes.map(Number), shown: bytes.map((b) => formatBytes(b)) };
  });
  return shown;
}
