"""A checkpoint's own ``tokenizer.json`` behind the interface the pages use of our tokenizer.

Hugging Face tokenizers store tokens in an internal alphabet: byte-level BPE (GPT-2, Llama 3,
Qwen2, SmolLM) writes each byte as a printable stand-in (a space is ``Ġ``), SentencePiece-style
BPE (Llama 2, TinyLlama, Mistral) writes a space as ``▁`` and unknown characters as byte
tokens ``<0xE4>``. ``HFTokenizer`` turns every token back into the bytes it stands for
(``token_bytes``) and into readable text (``id_to_token``, ``vocab``, ``tokens``): real spaces
(the pages show them as ␣), and bytes that are not a whole UTF-8 character as hex ``<0xE4>``.
``display_tokens(ids)`` goes one step further for a prompt: a Chinese character that GPT-2
splits over two byte tokens is shown as ``中…`` / ``…中`` on those two tokens.

Decoding concatenates the tokens' bytes and reads them as UTF-8, exactly like our own
tokenizer; a SentencePiece-style text drops the one space its tokenizer put in front.

Example: tok = HFTokenizer.from_folder("/models/gpt2"); tok.tokens(" Paris") -> [" Paris"]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.text.tokenizer import AppliedMerge, EncodingTrace, check_text

_BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
MAX_DISPLAY_GROUP = 4  # a UTF-8 character has at most 4 bytes: never look further ahead


@lru_cache(maxsize=1)
def byte_level_alphabet() -> dict[str, int]:
    """GPT-2's printable stand-in character for each byte, inverted: char -> byte.

    Example: byte_level_alphabet()["Ġ"] -> 32
    """
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def _components(node: Any) -> list[dict[str, Any]]:
    """A normalizer / pre-tokenizer / decoder node and everything nested in a Sequence."""
    if not isinstance(node, dict):
        return []
    found = [node]
    for key in ("pretokenizers", "decoders", "normalizers", "processors"):
        for child in node.get(key) or []:
            found += _components(child)
    return found


def _readable_bytes(data: bytes) -> str:
    """Bytes as text where they are whole UTF-8 characters, hex ``<0xE4>`` where they are not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(data):
        for size in (4, 3, 2, 1):
            chunk = data[i:i + size]
            try:
                out.append(chunk.decode("utf-8"))
                i += len(chunk)
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(f"<0x{data[i]:02X}>")
            i += 1
    return "".join(out)


def readable_tokens(pieces: Sequence[bytes]) -> list[str]:
    """One label per token; a character split over several tokens appears on each of them.

    Example: readable_tokens([b"\\xe4\\xb8", b"\\xad"]) -> ["中…", "…中"]
    """
    labels: list[str] = []
    i = 0
    while i < len(pieces):
        try:
            labels.append(pieces[i].decode("utf-8"))
            i += 1
            continue
        except UnicodeDecodeError:
            pass
        for end in range(i + 2, min(len(pieces), i + MAX_DISPLAY_GROUP) + 1):
            try:
                text = b"".join(pieces[i:end]).decode("utf-8")
            except UnicodeDecodeError:
                continue
            count = end - i
            labels += [("…" if k else "") + text + ("…" if k < count - 1 else "") for k in range(count)]
            i = end
            break
        else:
            labels.append(_readable_bytes(pieces[i]))
            i += 1
    return labels


class HFTokenizer:
    """A Hugging Face ``tokenizer.json`` (via the ``tokenizers`` library), shared read-only.

    ``vocab_size`` is the model's embedding size, which may exceed the tokenizer's (Qwen2 pads
    its table to a multiple of 128); ids past the tokenizer's own are unused rows that decode
    to nothing.
    """

    mode = "hf"

    def __init__(self, tokenizer: Any, spec: dict[str, Any], model_vocab_size: int | None = None,
                 eos_token_id: int | None = None) -> None:
        self._tok = tokenizer
        parts = [*_components(spec.get("normalizer")), *_components(spec.get("pre_tokenizer")),
                 *_components(spec.get("decoder"))]
        kinds = {p.get("type") for p in parts}
        self.byte_level = "ByteLevel" in kinds
        # SentencePiece style: a "▁" is put before the text, and decoding takes that space off again.
        self.prefix_space = not self.byte_level and any(
            (p.get("type") == "Metaspace" and p.get("prepend_scheme", "always") != "never" and p.get("add_prefix_space", True))
            or (p.get("type") == "Prepend" and p.get("prepend") == "▁")
            for p in parts)
        model = spec.get("model") or {}
        self.model_type = str(model.get("type", ""))
        own = int(tokenizer.get_vocab_size(with_added_tokens=True))
        self._own_size = own
        self.vocab_size = max(own, int(model_vocab_size or 0))
        added = spec.get("added_tokens") or []
        self.special_tokens: tuple[str, ...] = tuple(a["content"] for a in added if a.get("special"))
        self._special_ids = {int(a["id"]) for a in added if a.get("special")}
        self._raw: list[str | None] = [tokenizer.id_to_token(i) for i in range(own)]
        self._bytes: list[bytes] = [self._raw_bytes(i) for i in range(own)]
        self._readable: list[str] = [self._readable_one(i) for i in range(own)]
        self._readable += [f"<unused {i}>" for i in range(own, self.vocab_size)]
        self._bytes += [b""] * (self.vocab_size - own)
        self._to_id = {tok: i for i, tok in enumerate(self._raw) if tok is not None}
        self._rank: dict[tuple[str, str], int] = {}
        if self.model_type == "BPE":
            for rank, merge in enumerate(model.get("merges") or []):
                pair = tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge)
                if len(pair) == 2 and pair not in self._rank:
                    self._rank[pair] = rank  # type: ignore[index]
        self.eot_id = self._end_of_text(eos_token_id)

    @classmethod
    def from_folder(cls, folder: str | Path, model_vocab_size: int | None = None,
                    eos_token_id: int | None = None) -> HFTokenizer:
        """Read ``tokenizer.json`` from a model folder (never downloads)."""
        from tokenizers import Tokenizer

        path = Path(folder) / "tokenizer.json"
        text = path.read_text(encoding="utf-8")
        return cls(Tokenizer.from_str(text), json.loads(text), model_vocab_size, eos_token_id)

    # --- vocabulary -------------------------------------------------------------------

    def _end_of_text(self, eos_token_id: int | None) -> int | None:
        if eos_token_id is not None and 0 <= eos_token_id < self.vocab_size:
            return int(eos_token_id)
        for name in ("<|endoftext|>", "</s>", "<|end_of_text|>", "<|im_end|>"):
            if name in self._to_id:
                return self._to_id[name]
        return None

    def _raw_bytes(self, i: int) -> bytes:
        token = self._raw[i]
        if token is None:
            return b""
        match = None if self.byte_level else _BYTE_TOKEN.match(token)
        if match:  # SentencePiece byte fallback: <0xE4> is the byte 0xE4
            return bytes([int(match.group(1), 16)])
        if i in self._special_ids:
            return token.encode("utf-8")
        if self.byte_level:
            alphabet = byte_level_alphabet()
            if all(ch in alphabet for ch in token):
                return bytes(alphabet[ch] for ch in token)
            return token.encode("utf-8")
        return token.replace("▁", " ").encode("utf-8")

    def _readable_one(self, i: int) -> str:
        if i in self._special_ids and not _BYTE_TOKEN.match(self._raw[i] or ""):
            return self._raw[i] or ""
        return _readable_bytes(self._bytes[i])

    def _check_id(self, i: Any) -> int:
        if isinstance(i, bool) or not (isinstance(i, int) or hasattr(i, "__index__")):
            raise TypeError(f"token id must be an int, got {type(i).__name__}")
        i = int(i)
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"token id {i} is out of range [0, {self.vocab_size})")
        return i

    def id_to_token(self, i: int) -> str:
        """The token as readable text (spaces as spaces, partial UTF-8 as ``<0xE4>``)."""
        return self._readable[self._check_id(i)]

    def token_to_id(self, token: str) -> int:
        """Id of a token given in the tokenizer's own alphabet (``Ġthe``) or as readable text."""
        if token in self._to_id:
            return self._to_id[token]
        for i, readable in enumerate(self._readable):
            if readable == token:
                return i
        raise KeyError(f"{token!r} is not in the vocabulary")

    def token_bytes(self, i: int) -> bytes:
        """The raw bytes a token stands for."""
        return self._bytes[self._check_id(i)]

    def vocab(self) -> list[str]:
        """Every token as readable text, indexed by id."""
        return list(self._readable)

    # --- encoding ---------------------------------------------------------------------

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        """Text -> ids with the checkpoint's own tokenizer (no BOS/EOS added)."""
        text = check_text(text)
        if not text:
            return []
        # Lone surrogates cannot reach the Rust library; spell them as U+FFFD like a browser would.
        safe = text.encode("utf-8", errors="replace").decode("utf-8")
        return list(self._tok.encode(safe, add_special_tokens=False).ids)

    def tokens(self, text: str, *, allow_special: bool = True) -> list[str]:
        """Text -> readable token strings."""
        return [self._readable[i] for i in self.encode(text)]

    def display_tokens(self, ids: Iterable[int]) -> list[str]:
        """One readable label per id; characters split over byte tokens are merged for display."""
        checked = [self._check_id(i) for i in ids]
        labels = readable_tokens([self._bytes[i] for i in checked])
        return [self._readable[i] if (i in self._special_ids and not self._bytes[i]) or i >= self._own_size else label
                for i, label in zip(checked, labels)]

    def _merge_path(self, raw: str, index: int, applied: list[AppliedMerge]) -> tuple[str, ...] | None:
        """Replay the BPE merges that build one token from its characters (its own alphabet).

        Returns the starting symbols, or None (and records nothing) when the merges do not
        rebuild exactly this token (an added token, or a vocabulary edited by hand).
        """
        symbols = list(raw)
        start = tuple(symbols)
        mine: list[AppliedMerge] = []
        while len(symbols) > 1:
            best = min(((self._rank.get((a, b)), k) for k, (a, b) in enumerate(zip(symbols, symbols[1:]))
                        if (a, b) in self._rank), default=None)
            if best is None:
                break
            rank, k = best
            new = symbols[k] + symbols[k + 1]
            mine.append(AppliedMerge(rank + 1, (self._show(symbols[k]), self._show(symbols[k + 1])),
                                     self._show(new), index))
            symbols[k:k + 2] = [new]
        if symbols != [raw]:
            return None
        applied.extend(mine)
        return start

    def _show(self, raw: str) -> str:
        if self.byte_level:
            alphabet = byte_level_alphabet()
            if all(ch in alphabet for ch in raw):
                return _readable_bytes(bytes(alphabet[ch] for ch in raw))
            return raw
        match = _BYTE_TOKEN.match(raw)
        return _readable_bytes(bytes([int(match.group(1), 16)])) if match else raw.replace("▁", " ")

    def encode_with_trace(self, text: str, *, allow_special: bool = True) -> EncodingTrace:
        """Ids and readable tokens; each token is one piece, with the merges that built it."""
        ids = self.encode(text)
        applied: list[AppliedMerge] = []
        starts: list[tuple[str, ...]] = []
        for index, i in enumerate(ids):
            raw = self._raw[i] or ""
            start = None
            if self._rank and i not in self._special_ids and not _BYTE_TOKEN.match(raw):
                start = self._merge_path(raw, index, applied)
            starts.append((self._readable[i],) if start is None else tuple(self._show(s) for s in start))
        tokens = tuple(self._readable[i] for i in ids)
        return EncodingTrace(text, tokens, tuple(starts), tuple(applied), tokens, tuple(ids))

    def decode(self, ids: Iterable[int]) -> str:
        """Ids -> text: the tokens' bytes joined and read as UTF-8 (bad bytes become U+FFFD)."""
        if isinstance(ids, (str, bytes)):
            raise TypeError("decode expects a sequence of token ids")
        ids = list(ids)
        text = b"".join(self._bytes[self._check_id(i)] for i in ids).decode("utf-8", errors="replace")
        # A whole text loses the "▁" the tokenizer put in front; one token keeps its space (" Paris"), as ours does.
        return text[1:] if self.prefix_space and len(ids) > 1 and text.startswith(" ") else text

    def __repr__(self) -> str:
        kind = "byte-level BPE" if self.byte_level else self.model_type or "tokenizer"
        return f"HFTokenizer({kind}, vocab_size={self.vocab_size})"
