"""Byte Pair Encoding: one trainer, two configurations, and a tokenizer that shows its work.

``train_bpe(text, num_merges, mode=...)`` learns merges and returns a :class:`TrainResult`
(the full merge trace plus helpers for the Tokenization page) whose ``.tokenizer`` is a
:class:`BPETokenizer`.

Modes
-----
``classic``  The textbook algorithm (Sennrich et al., 2016). Words are whitespace-separated;
    each starts as its characters plus the end-of-word marker ``</w>``. The marker is a real
    symbol and is shown literally: after 4 merges on the seeds' corpus ``tokens("lowest")`` is
    ``['low', 'est', '</w>']`` and after 5 it is ``['low', 'est</w>']`` (the seeds write
    "low + est"). Decoding joins words with one space. Characters never seen in training have
    no id: ``tokens()`` keeps them as their own piece, ``encode()`` raises ``ValueError``.
``gpt``      What our model uses. A regex pre-tokenizer (see :mod:`core.text.pretokenize`) keeps a
    leading space with English words, splits digits one by one and cuts Chinese at lexicon
    words. The base vocabulary is the special token ``<|endoftext|>`` (id 0), 256 byte tokens
    ``<0x00>``..``<0xFF>`` (ids 1..256) and every character seen in training; a character
    outside it is spelled as its UTF-8 bytes (byte fallback), so any text round-trips.

Errors policy for text that is not valid Unicode: a Python ``str`` may hold lone surrogates
(``"\\ud800"``), which UTF-8 cannot encode. ``encode`` spells them with the ``surrogatepass``
byte sequence and ``decode`` reverses it, so even such strings round-trip in our tokenizer.
Byte sequences that are not UTF-8 at all (only possible from hand-made id lists, e.g. a lone
``<0xE4>`` from a truncated generation) decode to U+FFFD, one per bad byte (``replace``).
Training text containing lone surrogates is rejected (the HF export could not represent it).

Ids: special tokens, then (gpt) the 256 byte tokens, then the base characters in order of
first occurrence in the training text (classic: then ``</w>``), then one id per merge result.
If two merges produce the same string (e.g. ``(" t","he")`` and ``(" th","e")``) the string
keeps one id, as in Hugging Face.

Encoding applies merges greedily by rank (lowest rank first, leftmost first), which is what
Hugging Face ``tokenizers`` does, so ``save()`` can also write a ``tokenizer.json`` that gives
identical ids.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.text.bpe import LearnOutcome, Merge, Pair, learn_merges, merge_symbols
from core.text.pretokenize import (
    END_OF_WORD,
    build_gpt_pattern,
    classic_symbols,
    split_classic,
    split_gpt,
)

Mode = Literal["classic", "gpt"]
ENDOFTEXT = "<|endoftext|>"
FORMAT_NAME = "token-journey-bpe/1"
_BYTE_TOKENS = tuple(f"<0x{b:02X}>" for b in range(256))


def byte_token(b: int) -> str:
    """The fallback token that stands for one raw byte.

    Example: byte_token(0xE4) → '<0xE4>'
    """
    return _BYTE_TOKENS[b]


def _decode_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


# --------------------------------------------------------------------------------------------
# Results of encoding with a trace
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AppliedMerge:
    """A merge applied while encoding: its rank (1-based), the pair and the new token."""

    rank: int
    pair: Pair
    new: str
    piece_index: int = 0  # which pre-token it happened in


@dataclass(frozen=True)
class EncodingTrace:
    """Everything ``encode_with_trace`` did: pre-tokens, merges in order, final tokens.

    gpt mode: a character outside the vocabulary shows up as its byte tokens. classic mode:
    such a character stays a piece of its own with id -1 (classic has no byte fallback).
    """

    text: str
    pieces: tuple[str, ...]  # pre-tokens (special tokens appear as one piece)
    piece_symbols: tuple[tuple[str, ...], ...]  # each piece's starting symbols
    merges: tuple[AppliedMerge, ...]
    tokens: tuple[str, ...]
    ids: tuple[int, ...]


@dataclass(frozen=True)
class WordEncoding:
    """A word split with only the first n merges: the pieces and the merges that fired."""

    word: str
    pieces: tuple[str, ...]
    merges: tuple[AppliedMerge, ...]


# --------------------------------------------------------------------------------------------
# The tokenizer
# --------------------------------------------------------------------------------------------


def check_text(text: object) -> str:
    """``text`` itself when it is a str; a TypeError that says what to do otherwise (both tokenizers use it).

    Example: check_text(b"hi") raises TypeError("expected text (str), got bytes: decode it first, ...")
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise TypeError("expected text (str), got bytes: decode it first, "
                        "e.g. data.decode('utf-8')")
    if not isinstance(text, str):
        raise TypeError(f"expected text (str), got {type(text).__name__}")
    return text


class BPETokenizer:
    """A trained BPE tokenizer (immutable after construction apart from an internal memo of
    encoded pieces; safe to share between threads).

    Build it with :func:`train_bpe` or :meth:`load`; the constructor is the low-level way.
    Example: tok = train_bpe("low lower", 3).tokenizer; tok.tokens("low") → ['low</w>']
    """

    def __init__(
        self,
        mode: Mode,
        base_vocab: Sequence[str],
        merges: Sequence[Pair],
        cjk_lexicon: Sequence[str] = (),
        special_tokens: Sequence[str] | None = None,
    ) -> None:
        if mode not in ("classic", "gpt"):
            raise ValueError(f"mode must be 'classic' or 'gpt', got {mode!r}")
        self.mode: Mode = mode
        self.base_vocab: tuple[str, ...] = tuple(base_vocab)
        self.merges: tuple[Pair, ...] = tuple((a, b) for a, b in merges)
        self.cjk_lexicon: tuple[str, ...] = tuple(sorted(set(cjk_lexicon)))
        if special_tokens is None:
            special_tokens = (ENDOFTEXT,) if mode == "gpt" else ()
        self.special_tokens: tuple[str, ...] = tuple(special_tokens)
        self.pattern: str = build_gpt_pattern(self.cjk_lexicon) if mode == "gpt" else ""

        vocab: list[str] = [*self.special_tokens]
        if mode == "gpt":
            vocab += _BYTE_TOKENS
        vocab += self.base_vocab
        to_id: dict[str, int] = {}
        for i, tok in enumerate(vocab):
            if tok in to_id:
                raise ValueError(f"duplicate base token {tok!r}")
            to_id[tok] = i
        self._merge_rank: dict[Pair, int] = {}
        for rank, (a, b) in enumerate(self.merges):
            for part in (a, b):
                if part not in to_id:
                    raise ValueError(f"merge {rank + 1} uses unknown token {part!r}")
            if (a, b) not in self._merge_rank:  # a repeated pair keeps its first rank
                self._merge_rank[(a, b)] = rank
            if a + b not in to_id:
                to_id[a + b] = len(vocab)
                vocab.append(a + b)
        self._vocab: tuple[str, ...] = tuple(vocab)
        self._to_id = to_id
        self._byte_offset = len(self.special_tokens)
        self._cache: dict[str, tuple[int, ...]] = {}

    # ---- vocabulary ---------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """Number of distinct ids."""
        return len(self._vocab)

    @property
    def eot_id(self) -> int | None:
        """Id of ``<|endoftext|>`` (0 in gpt mode), or None when the tokenizer has none."""
        return self._to_id.get(ENDOFTEXT) if ENDOFTEXT in self.special_tokens else None

    def id_to_token(self, i: int) -> str:
        """Example: tok.id_to_token(0) → '<|endoftext|>' (gpt mode)"""
        if isinstance(i, bool) or not isinstance(i, int) and not hasattr(i, "__index__"):
            raise TypeError(f"token id must be an int, got {type(i).__name__}")
        i = int(i)
        if not 0 <= i < len(self._vocab):
            raise ValueError(f"token id {i} is out of range [0, {len(self._vocab)})")
        return self._vocab[i]

    def token_to_id(self, token: str) -> int:
        """Example: tok.token_to_id('<0xE4>') → 229 (gpt mode: byte 0xE4 = 228, plus 1)"""
        try:
            return self._to_id[token]
        except KeyError:
            raise KeyError(f"{token!r} is not in the vocabulary") from None

    def token_bytes(self, i: int) -> bytes:
        """The raw bytes a token stands for (a byte token gives its one byte).

        Example: tok.token_bytes(tok.token_to_id('<0xE4>')) → b'\\xe4'
        """
        tok = self.id_to_token(i)
        if self.mode == "gpt" and self._byte_offset <= i < self._byte_offset + 256:
            return bytes([i - self._byte_offset])
        return tok.encode("utf-8", errors="surrogatepass")

    def vocab(self) -> list[str]:
        """All token strings, indexed by id."""
        return list(self._vocab)

    # ---- encoding -----------------------------------------------------------------------

    def _split_specials(self, text: str, allow_special: bool) -> list[tuple[str, bool]]:
        """Cut text at special tokens: [(chunk, is_special)]."""
        if not allow_special or not self.special_tokens:
            return [(text, False)] if text else []
        out: list[tuple[str, bool]] = []
        pos = 0
        while pos < len(text):
            hits = [(text.find(s, pos), s) for s in self.special_tokens]
            hits = [(at, s) for at, s in hits if at >= 0]
            if not hits:
                out.append((text[pos:], False))
                break
            at, special = min(hits, key=lambda h: (h[0], -len(h[1])))
            if at > pos:
                out.append((text[pos:at], False))
            out.append((special, True))
            pos = at + len(special)
        return out

    def _pieces(self, chunk: str) -> list[str]:
        return split_gpt(chunk, self.pattern) if self.mode == "gpt" else split_classic(chunk)

    def _start_symbols(self, piece: str) -> list[str]:
        return list(piece) if self.mode == "gpt" else classic_symbols(piece)

    def _merge_greedy(self, symbols: list[str], piece_index: int = 0,
                      trace: list[AppliedMerge] | None = None) -> list[str]:
        """Apply the lowest-rank adjacent pair until none is left (HF's order)."""
        ranks = self._merge_rank
        while len(symbols) > 1:
            best_rank, best = None, None
            for pair in zip(symbols, symbols[1:]):
                r = ranks.get(pair)
                if r is not None and (best_rank is None or r < best_rank):
                    best_rank, best = r, pair
            if best is None:
                break
            new = best[0] + best[1]
            symbols = merge_symbols(symbols, best, new)
            if trace is not None:
                trace.append(AppliedMerge(best_rank + 1, best, new, piece_index))
        return symbols

    def _symbol_ids(self, symbols: Iterable[str]) -> list[int]:
        ids: list[int] = []
        for s in symbols:
            i = self._to_id.get(s)
            if i is not None:
                ids.append(i)
            elif self.mode == "gpt":  # byte fallback; merges never involve unknown chars
                ids.extend(self._byte_offset + b
                           for b in s.encode("utf-8", errors="surrogatepass"))
            else:
                raise ValueError(
                    f"character {s!r} is not in this classic tokenizer's base vocabulary "
                    "(classic mode has no byte fallback; use tokens() to see the pieces)"
                )
        return ids

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        """Text → token ids. ``<|endoftext|>`` in the text becomes its special id unless
        ``allow_special=False`` (then it is encoded as ordinary characters).

        Example: tok.encode("法国的首都是") → four ids (法国 / 的 / 首都 / 是)
        """
        text = check_text(text)
        ids: list[int] = []
        for chunk, special in self._split_specials(text, allow_special):
            if special:
                ids.append(self._to_id[chunk])
                continue
            for piece in self._pieces(chunk):
                cached = self._cache.get(piece)
                if cached is None:
                    cached = tuple(self._symbol_ids(self._merge_greedy(self._start_symbols(piece))))
                    if len(self._cache) < 200_000:
                        self._cache[piece] = cached
                ids.extend(cached)
        return ids

    def tokens(self, text: str, *, allow_special: bool = True) -> list[str]:
        """Text → token strings (gpt: byte tokens appear as ``<0xE4>``; classic: characters
        never seen in training are kept as their own piece).

        Example: tok.tokens("lowest") → ['low', 'est', '</w>'] (classic, 4 merges, seeds)
        """
        text = check_text(text)
        if self.mode == "gpt":
            return [self._vocab[i] for i in self.encode(text, allow_special=allow_special)]
        out: list[str] = []
        for piece in split_classic(text):
            out.extend(self._merge_greedy(classic_symbols(piece)))
        return out

    def encode_with_trace(self, text: str, *, allow_special: bool = True) -> EncodingTrace:
        """Encode and show the work: pre-tokens, each merge in the order applied, result.

        Example: tok.encode_with_trace("lowest").merges → (lo, low, es, est) with their ranks
        """
        text = check_text(text)
        pieces: list[str] = []
        starts: list[tuple[str, ...]] = []
        applied: list[AppliedMerge] = []
        toks: list[str] = []
        ids: list[int] = []
        for chunk, special in self._split_specials(text, allow_special):
            chunk_pieces = [chunk] if special else self._pieces(chunk)
            for piece in chunk_pieces:
                index = len(pieces)
                pieces.append(piece)
                if special:
                    starts.append((piece,))
                    toks.append(piece)
                    ids.append(self._to_id[piece])
                    continue
                symbols = self._start_symbols(piece)
                starts.append(tuple(symbols))
                final = self._merge_greedy(symbols, index, applied)
                piece_ids = self._symbol_ids(final) if self.mode == "gpt" else [
                    self._to_id.get(s, -1) for s in final]
                ids.extend(piece_ids)
                toks.extend(self._vocab[i] if self.mode == "gpt" else final[k]
                            for k, i in enumerate(piece_ids))
        return EncodingTrace(text, tuple(pieces), tuple(starts), tuple(applied),
                             tuple(toks), tuple(ids))

    # ---- decoding -----------------------------------------------------------------------

    def decode(self, ids: Iterable[int]) -> str:
        """Token ids → text. gpt mode is lossless; classic joins words with single spaces.

        Example: tok.decode(tok.encode("9.11 🙂")) → '9.11 🙂'
        """
        if isinstance(ids, (str, bytes)):
            raise TypeError("decode expects a sequence of token ids")
        ids = list(ids)
        if self.mode == "gpt":
            return _decode_utf8(b"".join(self.token_bytes(i) for i in ids))
        text = "".join(self.id_to_token(i) for i in ids)
        return text.replace(END_OF_WORD, " ").rstrip(" ")

    # ---- persistence --------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write ``bpe.json`` (what :meth:`load` reads), human-readable ``vocab.txt`` and
        ``merges.txt``, and in gpt mode a Hugging Face ``tokenizer.json``.

        Example: tok.save("assets/tokenizer")  # then BPETokenizer.load("assets/tokenizer")
        """
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        model = {
            "format": FORMAT_NAME,
            "mode": self.mode,
            "special_tokens": list(self.special_tokens),
            "cjk_lexicon": list(self.cjk_lexicon),
            "pattern": self.pattern,
            "base_vocab": list(self.base_vocab),
            "merges": [list(m) for m in self.merges],
        }
        (out / "bpe.json").write_text(json.dumps(model, ensure_ascii=False, indent=1) + "\n",
                                      encoding="utf-8")
        parent: dict[str, Pair] = {a + b: (a, b) for a, b in reversed(self.merges)}
        with (out / "vocab.txt").open("w", encoding="utf-8") as fh:
            fh.write("# id\ttoken (JSON-quoted)\tmade from\n")
            for i, tok in enumerate(self._vocab):
                src = parent.get(tok)
                made = f"{json.dumps(src[0], ensure_ascii=False)} + " \
                       f"{json.dumps(src[1], ensure_ascii=False)}" if src else ""
                fh.write(f"{i}\t{json.dumps(tok, ensure_ascii=False)}\t{made}\n")
        with (out / "merges.txt").open("w", encoding="utf-8") as fh:
            fh.write("# rank\tleft\tright\tnew (JSON-quoted)\n")
            for rank, (a, b) in enumerate(self.merges, start=1):
                q = [json.dumps(x, ensure_ascii=False) for x in (a, b, a + b)]
                fh.write(f"{rank}\t{q[0]}\t{q[1]}\t{q[2]}\n")
        if self.mode == "gpt":
            self.to_hf().save(str(out / "tokenizer.json"))
        return out

    @classmethod
    def load(cls, directory: str | Path) -> BPETokenizer:
        """Read a tokenizer written by :meth:`save`.

        Example: BPETokenizer.load("assets/tokenizer").vocab_size
        """
        path = Path(directory) / "bpe.json"
        if not path.is_file():
            raise FileNotFoundError(f"no tokenizer at {path} (expected bpe.json from save())")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT_NAME:
            raise ValueError(f"{path} is not a {FORMAT_NAME} file")
        return cls(
            data["mode"],
            data["base_vocab"],
            [tuple(m) for m in data["merges"]],
            cjk_lexicon=data.get("cjk_lexicon", ()),
            special_tokens=data.get("special_tokens"),
        )

    def to_hf(self):  # -> tokenizers.Tokenizer (imported lazily: optional dependency)
        """The same tokenizer as a Hugging Face ``tokenizers.Tokenizer`` (gpt mode only):
        BPE with ``byte_fallback=True``, our regex as an isolated ``Split`` pre-tokenizer,
        ``<|endoftext|>`` as a special added token, byte-fallback + fuse decoders.
        """
        if self.mode != "gpt":
            raise ValueError("only gpt-mode tokenizers have a Hugging Face equivalent")
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
        from tokenizers import AddedToken

        vocab = {tok: i for i, tok in enumerate(self._vocab)}
        hf = Tokenizer(models.BPE(vocab=vocab, merges=list(self.merges), byte_fallback=True,
                                  fuse_unk=False))
        hf.pre_tokenizer = pre_tokenizers.Split(Regex(self.pattern), behavior="isolated",
                                                invert=False)
        hf.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
        hf.add_special_tokens([AddedToken(s, special=True, normalized=False)
                               for s in self.special_tokens])
        return hf

    def __repr__(self) -> str:
        return (f"BPETokenizer(mode={self.mode!r}, vocab_size={self.vocab_size}, "
                f"merges={len(self.merges)})")


def byte_fallback_share(tokenizer: BPETokenizer, texts: Iterable[str]) -> dict[str, float]:
    """How many characters of ``texts`` the tokenizer spells with byte tokens (gpt mode):
    {"chars": all characters, "byte_chars": characters spelled as bytes, "share": their ratio}.

    A character is a byte-fallback character when its UTF-8 bytes come out as ``<0x..>``
    tokens; consecutive byte tokens are decoded back to count characters, not bytes.
    Example: byte_fallback_share(tok, ["I love pizza 🍕"]) → {'chars': 14, 'byte_chars': 1, 'share': 0.0714...}
    """
    if tokenizer.mode != "gpt":
        raise ValueError("byte fallback exists in gpt mode only")
    chars = byte_chars = 0
    offset = len(tokenizer.special_tokens)
    for text in texts:
        chars += len(text)
        run = bytearray()
        for i in [*tokenizer.encode(text, allow_special=False), -1]:
            if offset <= i < offset + 256:
                run.append(i - offset)
                continue
            if run:
                byte_chars += len(_decode_utf8(bytes(run)))
                run.clear()
    return {"chars": chars, "byte_chars": byte_chars, "share": byte_chars / chars if chars else 0.0}


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenCountCurve:
    """Corpus size in tokens after n = 0..len(merges) merges."""

    tokens: tuple[int, ...]
    num_words: int

    @property
    def tokens_per_word(self) -> tuple[float, ...]:
        return tuple(t / self.num_words if self.num_words else 0.0 for t in self.tokens)

    def rows(self) -> list[dict[str, float]]:
        """One row per n, ready for a DataFrame: merges, tokens, tokens_per_word."""
        return [{"merges": n, "tokens": t, "tokens_per_word": tpw}
                for n, (t, tpw) in enumerate(zip(self.tokens, self.tokens_per_word))]


@dataclass
class TrainResult:
    """The full record of a BPE training run.

    ``words`` are the distinct pre-tokens with their frequency in first-occurrence order
    (classic: whitespace words; gpt: regex pieces). ``stopped_early``/``message`` say when
    fewer merges than requested were possible.
    """

    mode: Mode
    base_vocab: list[str]
    merges: list[Merge]
    tokenizer: BPETokenizer
    words: list[tuple[str, int]]
    requested_merges: int
    stopped_early: bool = False
    message: str = ""

    def _start(self, word: str) -> list[str]:
        return classic_symbols(word) if self.mode == "classic" else list(word)

    def _check_n(self, n: int) -> int:
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"n must be an int, got {type(n).__name__}")
        if not 0 <= n <= len(self.merges):
            raise ValueError(f"n must be between 0 and {len(self.merges)}, got {n}")
        return n

    def segmentation_at(self, n: int) -> list[tuple[str, int, list[str]]]:
        """Every training word with its frequency and its pieces after the first n merges,
        replaying training exactly (merge k applied to all words, k = 1..n).

        Example: result.segmentation_at(2)[0] → ('low', 5, ['low', '</w>'])  (seeds' corpus)
        """
        n = self._check_n(n)
        symbols = [self._start(w) for w, _ in self.words]
        where: dict[Pair, set[int]] = {}
        for wi, syms in enumerate(symbols):
            for p in zip(syms, syms[1:]):
                where.setdefault(p, set()).add(wi)
        for m in self.merges[:n]:
            for wi in sorted(where.pop(m.pair, ())):
                merged = merge_symbols(symbols[wi], m.pair, m.new)
                for p in zip(merged, merged[1:]):
                    where.setdefault(p, set()).add(wi)
                symbols[wi] = merged
        return [(w, f, syms) for (w, f), syms in zip(self.words, symbols)]

    def token_count_curve(self) -> TokenCountCurve:
        """Corpus token count for n = 0..len(merges): start from the character count and
        subtract each merge's saving (no re-tokenization needed).

        Example: result.token_count_curve().tokens[:3] → (58, 51, 44)  (seeds' corpus)
        """
        total = sum(f * len(self._start(w)) for w, f in self.words)
        tokens = [total]
        for m in self.merges:
            tokens.append(tokens[-1] - m.tokens_saved)
        return TokenCountCurve(tuple(tokens), sum(f for _, f in self.words))

    def encode_word(self, word: str, n: int) -> WordEncoding:
        """Split a (possibly new) word with only the first n merges, in training order,
        listing the merges that fired.

        Example: result.encode_word("lowest", 4).pieces → ('low', 'est', '</w>')
        """
        if not isinstance(word, str):
            raise TypeError(f"word must be str, got {type(word).__name__}")
        n = self._check_n(n)
        symbols = self._start(word)
        fired: list[AppliedMerge] = []
        for m in self.merges[:n]:
            if len(symbols) < 2:
                break
            if any(p == m.pair for p in zip(symbols, symbols[1:])):
                symbols = merge_symbols(symbols, m.pair, m.new)
                fired.append(AppliedMerge(m.rank, m.pair, m.new))
        return WordEncoding(word, tuple(symbols), tuple(fired))


def _validate_training_args(text: object, num_merges: object, mode: object) -> None:
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise TypeError("train_bpe expects text (str), got bytes: decode it first, "
                        "e.g. data.decode('utf-8')")
    if not isinstance(text, str):
        raise TypeError(f"train_bpe expects text (str), got {type(text).__name__}")
    if isinstance(num_merges, bool) or not isinstance(num_merges, int):
        raise TypeError(f"num_merges must be an int, got {type(num_merges).__name__}")
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    if mode not in ("classic", "gpt"):
        raise ValueError(f"mode must be 'classic' or 'gpt', got {mode!r}")


def _chars(extra: Iterable[str]) -> list[str]:
    """Single characters of ``extra`` (strings are split; lone surrogates rejected)."""
    out = [ch for item in extra for ch in item]
    if any(0xD800 <= ord(c) <= 0xDFFF for c in out):
        raise ValueError("extra_chars contains lone surrogate characters")
    return out


def train_bpe(
    text: str,
    num_merges: int,
    mode: Mode = "classic",
    *,
    cjk_lexicon: Iterable[str] | None = (),
    progress: Callable[[int, int], None] | None = None,
    top_k: int = 20,
    extra_chars: Iterable[str] = (),
) -> TrainResult:
    """Learn ``num_merges`` BPE merges from ``text`` and record every step.

    Raises TypeError for non-str text (e.g. bytes) or a non-int count, ValueError for a
    negative count, an unknown mode, or text with no word in it (empty or only whitespace).
    Asking for more merges than the corpus allows is not an error: training stops when every
    word is one token and the result has ``stopped_early=True`` and a ``message``.

    ``cjk_lexicon`` (gpt mode) is the list of Chinese words the pre-tokenizer keeps together,
    handed in by the caller (the app passes ``core.text.corpus.cjk_lexicon()``, the words of
    ``assets/world.json``); the default ``()`` treats every Han character as its own piece. The
    tokenizer knows no corpus: it is given its lexicon, like its text. ``progress(done, total)``
    is called after every merge. ``extra_chars`` (gpt mode) adds characters to the base
    vocabulary even when the text lacks them (after the text's own characters, in the given
    order): the model tokenizer adds printable ASCII and common Han characters this way, so
    they are single tokens instead of byte fallback.

    Ties: the pair seen first in the corpus wins (details in :mod:`core.text.bpe`).

    Example: [m.new for m in train_bpe("low low lower", 2).merges] → ['lo', 'low']
    """
    _validate_training_args(text, num_merges, mode)
    if mode == "gpt":
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise ValueError("training text contains lone surrogate characters "
                             "(not valid Unicode); clean it first")
        lexicon = list(cjk_lexicon or ())
        probe = BPETokenizer("gpt", (), (), cjk_lexicon=lexicon)
        counter: Counter[str] = Counter()
        for chunk, special in probe._split_specials(text, True):
            if not special:
                counter.update(split_gpt(chunk, probe.pattern))
        words = list(counter.items())  # Counter keeps first-occurrence order
        start = [list(w) for w, _ in words]
        base = list(dict.fromkeys([*(ch for w, _ in words for ch in w), *_chars(extra_chars)]))
    else:
        if tuple(extra_chars):
            raise ValueError("extra_chars is for gpt mode only")
        lexicon = []
        counter = Counter(split_classic(text))
        words = list(counter.items())
        start = [classic_symbols(w) for w, _ in words]
        base = [*dict.fromkeys(ch for w, _ in words for ch in w), END_OF_WORD]
    if not words:
        raise ValueError("the training text has no words (it is empty or only whitespace"
                         + (" and special tokens" if mode == "gpt" else "") + ")")

    outcome: LearnOutcome = learn_merges(list(zip(start, (f for _, f in words))), num_merges,
                                         progress=progress, top_k=top_k)
    tokenizer = BPETokenizer(mode, base, [m.pair for m in outcome.merges], cjk_lexicon=lexicon)
    return TrainResult(
        mode=mode,
        # gpt: the whole base (special, 256 bytes, characters); classic: characters + </w>
        base_vocab=tokenizer.vocab()[: len(tokenizer.special_tokens)
                                     + (256 if mode == "gpt" else 0) + len(base)],
        merges=outcome.merges,
        tokenizer=tokenizer,
        words=words,
        requested_merges=num_merges,
        stopped_early=outcome.stopped_early,
        message=outcome.message,
    )
