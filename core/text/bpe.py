"""The BPE merge learner: incremental pair counts, a lazy max-heap, and a full trace.

Input is a list of *words* (pre-tokens) with their frequency, each already cut into starting
symbols. Output is the ordered list of merges, each with what a teaching page needs to show:
the chosen pair, its count, the pairs tied with it and the top pair counts before the merge.

Tie-breaking (deterministic, written down because the lesson depends on it): among pairs with
the same count, the pair whose first occurrence comes first in the corpus *as it is segmented
at that moment* wins: earliest word (distinct words are kept in first-occurrence order), then
earliest character offset inside that word. On the seeds' corpus ``low low low low low lower
lower newest newest newest widest widest widest`` this gives (l,o) before its tie (o,w), then
(lo,w), then (e,s) before its ties (s,t) and (t,</w>), then (es,t) before (t,</w>) - the
seeds' sequence low + est.

Complexity: instead of recounting all pairs after every merge (the naive O(merges × corpus)),
we keep ``pair → count``, ``pair → set(word index)`` and update only the words that contain the
merged pair. The best pair comes from a heap of ``(-count, first_occurrence, pair)`` entries; entries
go stale when a count or first occurrence changes and are skipped when popped ("lazy
deletion"). A first occurrence can only move later when the pair leaves the word that held
it; such pairs are marked dirty and their position is recomputed only if they reach the top.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

Pair = tuple[str, str]
ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class Merge:
    """One learned merge and the evidence for it.

    ``rank`` is 1-based (merge 1 is learned first and applied first). ``count`` is the number
    of adjacent occurrences of ``pair`` in the corpus (weighted by word frequency) just before
    the merge. ``ties`` are the other pairs with the same count, in tie-break order (at most
    ``max_ties`` of them; ``n_tied`` is how many there were in all). ``top_pairs`` is the table
    of the highest pair counts before the merge, in selection order. ``tokens_saved`` is how
    much the corpus token count drops; it equals ``count`` except for overlapping runs such as
    ``aaa`` where (a,a) occurs twice but only one merge fits.
    """

    rank: int
    pair: Pair
    new: str
    count: int
    ties: tuple[Pair, ...] = ()
    n_tied: int = 0
    top_pairs: tuple[tuple[Pair, int], ...] = ()
    tokens_saved: int = 0


@dataclass
class LearnOutcome:
    merges: list[Merge] = field(default_factory=list)
    stopped_early: bool = False
    message: str = ""


def merge_symbols(symbols: Sequence[str], pair: Pair, new: str) -> list[str]:
    """Replace every occurrence of ``pair`` (left to right, non-overlapping) by ``new``.

    Example: merge_symbols(["l", "o", "w"], ("l", "o"), "lo") → ['lo', 'w']
    """
    first, second = pair
    out: list[str] = []
    i, n = 0, len(symbols)
    while i < n:
        if i + 1 < n and symbols[i] == first and symbols[i + 1] == second:
            out.append(new)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


Key = tuple[int, int]  # (word index, character offset) of a pair's first occurrence


def _first_offsets(syms: Sequence[str]) -> dict[Pair, int]:
    """Character offset of the first occurrence of each adjacent pair in one word.

    Example: _first_offsets(["lo", "w", "e"]) → {('lo', 'w'): 0, ('w', 'e'): 2}
    """
    out: dict[Pair, int] = {}
    offset = 0
    for a, b in zip(syms, syms[1:]):
        out.setdefault((a, b), offset)
        offset += len(a)
    return out


class _PairTable:
    """Pair counts, pair → words index, first-occurrence keys and the lazy heap."""

    def __init__(self, symbols: list[list[str]], freqs: list[int]) -> None:
        self.symbols = symbols
        self.freqs = freqs
        self.counts: dict[Pair, int] = defaultdict(int)
        self.where: dict[Pair, set[int]] = defaultdict(set)
        self.key: dict[Pair, Key] = {}
        self.dirty: set[Pair] = set()  # key may be too early: recompute before trusting it
        for wi, syms in enumerate(symbols):
            f = freqs[wi]
            for pair in zip(syms, syms[1:]):
                self.counts[pair] += f
                self.where[pair].add(wi)
            for pair, off in _first_offsets(syms).items():
                self.key.setdefault(pair, (wi, off))
        # How many pairs have each count: gives the number of ties in O(1).
        self.pairs_with_count: Counter[int] = Counter(self.counts.values())
        self.heap = [(-c, self.key[p], p) for p, c in self.counts.items()]
        heapq.heapify(self.heap)

    def _exact_key(self, pair: Pair) -> Key:
        wi = min(self.where[pair])
        return wi, _first_offsets(self.symbols[wi])[pair]

    def top(self, k: int) -> list[tuple[Pair, int]]:
        """The k best live pairs, best first, without removing them."""
        live: list[tuple[int, Key, Pair]] = []
        seen: set[Pair] = set()
        heap = self.heap
        while heap and len(live) < k:
            neg, key, pair = heapq.heappop(heap)
            if pair in seen or self.counts.get(pair, 0) != -neg or self.key.get(pair) != key:
                continue  # stale or duplicate entry: drop it for good
            if pair in self.dirty:
                self.dirty.discard(pair)
                self.key[pair] = self._exact_key(pair)
                heapq.heappush(heap, (neg, self.key[pair], pair))
                continue
            seen.add(pair)
            live.append((neg, key, pair))
        for entry in live:
            heapq.heappush(heap, entry)
        return [(pair, -neg) for neg, _, pair in live]

    def merge(self, pair: Pair, new: str) -> int:
        """Merge ``pair`` in every word that holds it, updating everything incrementally.

        Returns how many tokens the corpus lost (frequency-weighted).
        """
        counts, where, key = self.counts, self.where, self.key
        old_count: dict[Pair, int] = {}  # count of each touched pair before this merge
        rekeyed: set[Pair] = set()
        saved = 0
        for wi in sorted(where.pop(pair, ())):
            syms = self.symbols[wi]
            merged = merge_symbols(syms, pair, new)
            if len(merged) == len(syms):
                continue
            f = self.freqs[wi]
            saved += (len(syms) - len(merged)) * f
            before = Counter(zip(syms, syms[1:]))
            after = Counter(zip(merged, merged[1:]))
            for p, n in before.items():
                old_count.setdefault(p, counts.get(p, 0))
                counts[p] -= n * f
                if p not in after:
                    where[p].discard(wi)
                    if key.get(p, (-1, 0))[0] == wi:
                        self.dirty.add(p)  # left the word of its first occurrence
            for p, off in _first_offsets(merged).items():
                old_count.setdefault(p, counts.get(p, 0))
                counts[p] += after[p] * f
                where[p].add(wi)
                cand = (wi, off)
                current = key.get(p)
                if current is None or cand < current or current[0] == wi:
                    # Exact: no earlier word holds p (its key never runs ahead of the truth).
                    if current != cand:
                        key[p] = cand
                        rekeyed.add(p)
                    self.dirty.discard(p)
            self.symbols[wi] = merged
        for p in old_count.keys() | rekeyed:
            old = old_count.get(p, counts.get(p, 0))
            now = counts.get(p, 0)
            if now != old:
                if old > 0:
                    self.pairs_with_count[old] -= 1
                if now > 0:
                    self.pairs_with_count[now] += 1
            if now > 0:
                if now != old or p in rekeyed:
                    heapq.heappush(self.heap, (-now, key[p], p))
            else:
                counts.pop(p, None)
                where.pop(p, None)
                key.pop(p, None)
                self.dirty.discard(p)
        return saved


def learn_merges(
    words: Sequence[tuple[Sequence[str], int]],
    num_merges: int,
    *,
    progress: ProgressCallback | None = None,
    top_k: int = 20,
    max_ties: int = 20,
) -> LearnOutcome:
    """Learn up to ``num_merges`` merges from ``(symbols, frequency)`` words in corpus order.

    Stops early (``stopped_early=True`` with a message) when no adjacent pair is left, i.e.
    every word has become a single token.

    Example: learn_merges([(list("low") + ["</w>"], 5)], 1).merges[0].pair → ('l', 'o')
    """
    table = _PairTable([list(s) for s, _ in words], [int(f) for _, f in words])
    outcome = LearnOutcome()
    for step in range(num_merges):
        live = table.top(max(top_k, max_ties + 1, 1))
        if not live:
            outcome.stopped_early = True
            outcome.message = (
                f"stopped after {step} of {num_merges} merges: no adjacent pair is left "
                "(every word is already a single token)"
            )
            break
        best, best_count = live[0]
        tied = tuple(p for p, c in live[1:] if c == best_count)[:max_ties]
        n_tied = table.pairs_with_count[best_count] - 1  # counted before the merge
        new = best[0] + best[1]
        saved = table.merge(best, new)
        outcome.merges.append(
            Merge(
                rank=step + 1,
                pair=best,
                new=new,
                count=best_count,
                ties=tied,
                n_tied=n_tied,
                top_pairs=tuple(live[:top_k]),
                tokens_saved=saved,
            )
        )
        if progress is not None:
            progress(step + 1, num_merges)
    return outcome
