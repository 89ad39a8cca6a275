"""Small pure helpers behind the tokenization page (no Streamlit, no model).

The BPE algorithm itself lives in ``core.text.tokenizer``; this module only turns its results and
user input into what the page shows: a checked corpus from an uploaded file, chips laid out
in rows, counts per text, and the size of an embedding matrix.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_CORPUS_BYTES = 2 * 1024 * 1024  # 2 MB: a novel's worth of text, still trains in seconds
MAX_CORPUS_CHARS = MAX_CORPUS_BYTES  # a typed or pasted corpus gets the same ceiling
_MAX_CONTROL_SHARE = 0.01  # more than 1 % control characters means "not a text file"
_KEPT_CONTROLS = "\n\t\r"


class CorpusProblem(ValueError):
    """A corpus the page should refuse, with a machine-readable ``code`` for translation.

    Codes: ``empty``, ``too_large``, ``binary``, ``undecodable``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _is_dropped_control(ch: str) -> bool:
    return ch not in _KEPT_CONTROLS and unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn")


def clean_corpus(text: str, max_chars: int = MAX_CORPUS_CHARS) -> str:
    """Refuse empty or huge text, drop stray control characters, normalise line ends.

    Example: clean_corpus("low\\x00 lower\\r\\n") -> "low lower\\n"
    """
    if not isinstance(text, str):
        raise CorpusProblem("binary", f"the corpus must be text, not {type(text).__name__}")
    if len(text) > max_chars:
        raise CorpusProblem("too_large", f"the corpus has {len(text):,} characters; the limit is {max_chars:,}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = "".join(ch for ch in text if not _is_dropped_control(ch))
    if not cleaned.strip():
        raise CorpusProblem("empty", "the corpus is empty")
    return cleaned


def decode_corpus(data: bytes, max_bytes: int = MAX_CORPUS_BYTES) -> str:
    """Turn an uploaded file into corpus text, or say clearly why it cannot be one.

    UTF-8 (with or without a byte-order mark) is accepted; a NUL byte, invalid UTF-8 or a
    large share of control characters means the file is not plain text.

    Example: decode_corpus("low lower".encode()) -> "low lower"
    """
    if not isinstance(data, (bytes, bytearray)):
        raise CorpusProblem("binary", f"expected the file's bytes, got {type(data).__name__}")
    if len(data) > max_bytes:
        raise CorpusProblem("too_large", f"the file has {len(data):,} bytes; the limit is {max_bytes:,}")
    if b"\x00" in data:
        raise CorpusProblem("binary", "the file contains NUL bytes: it is not a text file")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CorpusProblem("undecodable", f"the file is not valid UTF-8 (byte {error.start})") from None
    controls = sum(1 for ch in text if _is_dropped_control(ch))
    if text and controls / len(text) > _MAX_CONTROL_SHARE:
        raise CorpusProblem("binary", f"{controls} control characters: this does not look like text")
    return clean_corpus(text, max_chars=max_bytes)


# --- chips -------------------------------------------------------------------------------


def display_width(text: str) -> int:
    """Columns a string takes on screen: wide (CJK) characters count 2, others 1.

    Example: display_width("首都ab") -> 6
    """
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


@dataclass(frozen=True)
class ChipPlace:
    """Where one chip sits: its row and its horizontal extent in character columns."""

    row: int
    x0: float
    x1: float


def layout_chips(labels: Sequence[str], line_width: float, gap: float = 0.4, min_width: float = 1.5) -> list[ChipPlace]:
    """Lay chips left to right, wrapping to a new row when the next one would not fit.

    A chip is as wide as its label (``display_width``) plus one column of padding, never
    narrower than ``min_width``; a chip wider than a whole line gets a row of its own.

    Example: [p.row for p in layout_chips(["ab", "cd", "ef"], line_width=7)] -> [0, 0, 1]
    """
    if line_width <= 0:
        raise ValueError(f"line_width must be positive, got {line_width}")
    places: list[ChipPlace] = []
    row, x = 0, 0.0
    for label in labels:
        width = max(min_width, display_width(label) + 1.0)
        if x > 0 and x + width > line_width:
            row, x = row + 1, 0.0
        places.append(ChipPlace(row, x, x + width))
        x += width + gap
    return places


# --- counts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextCost:
    """How much a text costs the model: characters, tokens and characters per token."""

    chars: int
    tokens: int

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0


def text_cost(text: str, token_count: int) -> TextCost:
    """Characters (Unicode code points) against tokens.

    Example: text_cost("low lower", 3).chars_per_token -> 3.0
    """
    if token_count < 0:
        raise ValueError(f"token_count must be >= 0, got {token_count}")
    return TextCost(chars=len(text), tokens=token_count)


def embedding_matrix_params(vocab_size: int, d_model: int) -> int:
    """Numbers in a token-embedding table: one row of ``d_model`` per vocabulary entry.

    Example: embedding_matrix_params(50_257, 768) -> 38_597_376  # GPT-2 small, ≈ 38.6 M
    """
    if vocab_size <= 0 or d_model <= 0:
        raise ValueError(f"vocab_size and d_model must be positive, got {vocab_size}, {d_model}")
    return vocab_size * d_model


@dataclass(frozen=True)
class KnownVocabulary:
    """A published model's vocabulary and width (figures quoted in the curriculum)."""

    name: str
    vocab_size: int
    d_model: int

    @property
    def embedding_params(self) -> int:
        return embedding_matrix_params(self.vocab_size, self.d_model)


KNOWN_VOCABULARIES: tuple[KnownVocabulary, ...] = (
    KnownVocabulary("GPT-2 small", 50_257, 768),
    KnownVocabulary("GPT-3 175B", 50_257, 12_288),
    KnownVocabulary("DeepSeek V4 Flash", 129_280, 4_096),
    KnownVocabulary("Llama 4 Scout", 202_048, 5_120),
)


# --- training views ----------------------------------------------------------------------

PairStatus = str  # "chosen" | "tie" | ""


@dataclass(frozen=True)
class PairRow:
    """One line of the pair-frequency table shown before a merge."""

    left: str
    right: str
    count: int
    status: PairStatus  # "chosen": this merge's pair; "tie": same count, lost the tie-break


def pair_table(merge: Any) -> list[PairRow]:
    """The pair counts a merge was chosen from, the winner and its ties marked.

    ``merge`` is a ``core.text.bpe.Merge`` (``.pair``, ``.count``, ``.top_pairs``). Pairs tied with
    the winner but beyond the stored top rows are not listed (``merge.n_tied`` counts them).

    Example: [r.status for r in pair_table(result.merges[0])][:2] -> ['chosen', 'tie']  # seeds
    """
    rows: list[PairRow] = []
    for (left, right), count in merge.top_pairs:
        if (left, right) == tuple(merge.pair):
            status = "chosen"
        elif count == merge.count:
            status = "tie"
        else:
            status = ""
        rows.append(PairRow(left, right, int(count), status))
    if not any(r.status == "chosen" for r in rows):  # defensive: always show the winner
        rows.insert(0, PairRow(merge.pair[0], merge.pair[1], int(merge.count), "chosen"))
    return rows


def most_frequent_words(segmentation: Sequence[tuple[str, int, Sequence[str]]], limit: int) -> list[tuple[str, int, list[str]]]:
    """The ``limit`` most frequent words (ties keep corpus order), for the chip view.

    Example: most_frequent_words([("a", 1, ["a"]), ("b", 3, ["b"])], 1) -> [("b", 3, ["b"])]
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    order = sorted(range(len(segmentation)), key=lambda i: (-segmentation[i][1], i))
    return [(segmentation[i][0], segmentation[i][1], list(segmentation[i][2])) for i in order[:limit]]


@dataclass(frozen=True)
class VocabBreakdown:
    """A vocabulary in its parts: special tokens, byte tokens, base characters, merged tokens."""

    special: tuple[str, ...]
    byte_tokens: tuple[str, ...]
    characters: tuple[str, ...]
    merged: tuple[str, ...]

    @property
    def base_size(self) -> int:
        return len(self.special) + len(self.byte_tokens) + len(self.characters)

    @property
    def size(self) -> int:
        return self.base_size + len(self.merged)


def vocab_breakdown(base_vocab: Sequence[str], merged_tokens: Sequence[str], special: Sequence[str] = ()) -> VocabBreakdown:
    """Split a base vocabulary into specials, ``<0x..>`` byte tokens and characters, and add
    the merged tokens (a merge whose result already exists adds nothing, as in the tokenizer).

    Example: vocab_breakdown(["l", "o", "</w>"], ["lo"]).size -> 4
    """
    special_set = set(special)
    specials = tuple(tok for tok in base_vocab if tok in special_set)
    byte_tokens = tuple(tok for tok in base_vocab if tok not in special_set and _is_byte_token(tok))
    characters = tuple(tok for tok in base_vocab if tok not in special_set and not _is_byte_token(tok))
    known = set(base_vocab)
    merged: list[str] = []
    for tok in merged_tokens:
        if tok not in known:
            known.add(tok)
            merged.append(tok)
    return VocabBreakdown(specials, byte_tokens, characters, tuple(merged))


def vocab_sizes(base_vocab: Sequence[str], merged_tokens: Sequence[str]) -> list[int]:
    """Vocabulary size after 0, 1, ..., n merges (a repeated merge result adds no new id).

    Example: vocab_sizes(["a", "b"], ["ab", "ab"]) -> [2, 3, 3]
    """
    known = set(base_vocab)
    sizes = [len(known)]
    for tok in merged_tokens:
        known.add(tok)
        sizes.append(len(known))
    return sizes


def _is_byte_token(token: str) -> bool:
    return len(token) == 6 and token.startswith("<0x") and token.endswith(">")


# --- the model's tokenizer ---------------------------------------------------------------


@dataclass(frozen=True)
class TokenOrigin:
    """Where a token of an encoding came from: its pre-token and the merges that built it."""

    piece_index: int
    path: tuple[Any, ...]  # core.text.tokenizer.AppliedMerge, in the order they were applied


def token_origins(trace: Any, known: Callable[[str], bool]) -> list[TokenOrigin]:
    """For each token of an encoding trace, its pre-token and the merges that built it.

    ``trace`` is a ``core.text.tokenizer.EncodingTrace``; ``known(symbol)`` says whether a final
    symbol is one vocabulary entry (otherwise the tokenizer spelled it as UTF-8 byte tokens,
    which have no merge path). Replays each pre-token's starting symbols with the trace's
    merges, carrying along which merges formed every symbol.

    Example: [len(o.path) for o in token_origins(tok.encode_with_trace("lowest"), known)] -> [2, 3]
    """
    by_piece: dict[int, list[Any]] = {}
    for applied in trace.merges:
        by_piece.setdefault(applied.piece_index, []).append(applied)
    origins: list[TokenOrigin] = []
    for index, start in enumerate(trace.piece_symbols):
        symbols: list[tuple[str, tuple[Any, ...]]] = [(s, ()) for s in start]
        for applied in by_piece.get(index, []):
            left, right = applied.pair
            merged: list[tuple[str, tuple[Any, ...]]] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i][0] == left and symbols[i + 1][0] == right:
                    merged.append((applied.new, symbols[i][1] + symbols[i + 1][1] + (applied,)))
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        for symbol, path in symbols:
            if known(symbol):
                origins.append(TokenOrigin(index, path))
            else:  # byte fallback: one token per UTF-8 byte, none of them built by a merge
                origins.extend(TokenOrigin(index, ()) for _ in symbol.encode("utf-8", errors="surrogatepass"))
    if len(origins) != len(trace.tokens):
        raise ValueError(f"replayed {len(origins)} tokens but the trace has {len(trace.tokens)}")
    return origins


def token_lines(token_bytes: Sequence[bytes]) -> list[int]:
    """The text line each token sits on (a token holding a newline ends its line).

    Example: token_lines([b"a", b"\\n", b"b"]) -> [0, 0, 1]
    """
    lines: list[int] = []
    line = 0
    for data in token_bytes:
        lines.append(line)
        line += data.count(b"\n")
    return lines


def line_costs(text: str, encode: Callable[[str], Sequence[int]]) -> list[TextCost]:
    """Characters and tokens of every non-empty line, each line encoded on its own.

    Example: [c.tokens for c in line_costs("ab\\ncd", lambda s: list(s))] -> [2, 2]
    """
    return [text_cost(line, len(encode(line))) for line in text.split("\n") if line.strip()]


MAX_ENCODE_WORDS = 20  # the encode box is for a word or a short phrase


def encode_words_at(result: Any, text: str, n: int) -> list[Any]:
    """Cut ``text`` into words the way training did and split each with the first n merges.

    ``result`` is a ``core.text.tokenizer.TrainResult``; returns its ``WordEncoding`` per word (at
    most ``MAX_ENCODE_WORDS``). Classic mode cuts at whitespace; gpt mode uses the same regex
    as training, so a word keeps its leading space (" lowest").

    Example: [w.pieces for w in encode_words_at(result, "lowest", 4)] -> [('low', 'est', '</w>')]
    """
    from core.text.pretokenize import split_classic, split_gpt

    words = split_classic(text) if result.mode == "classic" else split_gpt(text, result.tokenizer.pattern)
    return [result.encode_word(word, n) for word in words[:MAX_ENCODE_WORDS]]


def vocab_id(tokenizer: Any, piece: str) -> int | None:
    """A token's id: its index in the vocabulary (special tokens, byte tokens, base symbols,
    then the merged tokens in the order they were learned), or None when it has none (a
    character training never saw).

    Merges only ever append, so the id a token has after n merges is the id it keeps in the
    full vocabulary: one ``tokenizer`` (the fully trained one) answers for every step.

    Example: vocab_id(train_bpe("low lower", 3).tokenizer, "lo") -> 6
    """
    try:
        return int(tokenizer.token_to_id(piece))
    except KeyError:
        return None
