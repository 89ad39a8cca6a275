// Token Journey: the BPE replay (src/bpe_replay.ts) for the unit tests, built by build.mjs (do not edit).


// src/bpe_replay.ts
function mergeSymbols(symbols, left, right, merged) {
  const out = [];
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
function replay(start, merges, n) {
  let symbols = start.slice();
  const fired = [];
  const upto = Math.max(0, Math.min(n, merges.length));
  for (let k = 0; k < upto; k++) {
    if (symbols.length < 2) break;
    const m = merges[k];
    let hit = false;
    for (let i = 0; i + 1 < symbols.length; i++) {
      if (symbols[i] === m.left && symbols[i + 1] === m.right) {
        hit = true;
        break;
      }
    }
    if (!hit) continue;
    symbols = mergeSymbols(symbols, m.left, m.right, m.new);
    fired.push(k);
  }
  return { pieces: symbols, fired };
}
function vocabSizes(base, merged) {
  const known = new Set(base);
  const sizes = [known.size];
  for (const tok of merged) {
    known.add(tok);
    sizes.push(known.size);
  }
  return sizes;
}
export {
  mergeSymbols,
  replay,
  vocabSizes
};
