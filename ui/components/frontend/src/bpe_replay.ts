// BPE replayed in the browser: the same steps as core.text.tokenizer (merge_symbols, applied
// merge k = 1..n in training order), so the page can show any step of a recorded training
// without asking the server. tests/e2e/test_tokenization.py compares it with the Python core.

export interface MergeRecord {
  rank: number; // 1-based, as core.text.bpe.Merge.rank
  left: string;
  right: string;
  new: string;
}

/** core.text.bpe.merge_symbols: every (left, right), left to right, non-overlapping -> new. */
export function mergeSymbols(symbols: readonly string[], left: string, right: string, merged: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < symbols.length) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(merged);
      i += 2;
    } else {
      out.push(symbols[i]);
      i += 1;
    }
  }
  return out;
}

export interface Replayed {
  pieces: string[];
  fired: number[]; // indexes into merges of the merges that changed the word, in order
}

/** TrainResult.encode_word(word, n) from the word's starting symbols: the first n merges in
 *  order, each applied where its pair occurs (the same as segmentation_at for a training word). */
export function replay(start: readonly string[], merges: readonly MergeRecord[], n: number): Replayed {
  let symbols = start.slice();
  const fired: number[] = [];
  const upto = Math.max(0, Math.min(n, merges.length));
  for (let k = 0; k < upto; k++) {
    if (symbols.length < 2) break;
    const m = merges[k];
    let hit = false;
    for (let i = 0; i + 1 < symbols.length; i++) {
      if (symbols[i] === m.left && symbols[i + 1] === m.right) { hit = true; break; }
    }
    if (!hit) continue;
    symbols = mergeSymbols(symbols, m.left, m.right, m.new);
    fired.push(k);
  }
  return { pieces: symbols, fired };
}

/** Vocabulary size after 0..n merges (core.text.bpe_view.vocab_sizes: a repeated result adds none). */
export function vocabSizes(base: readonly string[], merged: readonly string[]): number[] {
  const known = new Set(base);
  const sizes = [known.size];
  for (const tok of merged) {
    known.add(tok);
    sizes.push(known.size);
  }
  return sizes;
}
