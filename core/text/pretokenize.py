"""Pre-tokenization: cut text into the pieces that BPE may merge inside (never across).

Two rules, one per training mode:

* ``classic`` (Sennrich et al. 2016): split on whitespace; each word becomes its characters
  plus an end-of-word marker ``</w>``. Whitespace itself is not kept (decoding joins words
  with one space), which is the textbook simplification.
* ``gpt``: one regular expression (GPT-2 style) whose matches, together with any text between
  them, cover the input exactly, so no character is ever lost. In priority order:

  1. a word of the Chinese lexicon (longest first), e.g. ``法国`` ``首都``;
  2. any other single Han character;
  3. an English contraction suffix (``'s`` ``'t`` ``'re`` ``'ve`` ``'m`` ``'ll`` ``'d``);
  4. a run of non-Han letters with at most one leading space (``" Paris"``);
  5. one digit with at most one leading space (so ``9.11`` → ``9`` ``.`` ``1`` ``1``);
  6. a run of other symbols (punctuation, emoji, controls) with at most one leading space;
  7. whitespace: a run that is not followed by a non-space (``\\s+(?!\\S)``), else any run,
     so ``"a  b"`` gives ``"a"`` ``" "`` ``" b"`` and the space stays glued to the word.

  Why a lexicon for Chinese: Chinese has no spaces, so frequency-only BPE over a whole Han run
  happily learns tokens such as ``的首都`` or ``首都是`` that straddle word boundaries. Cutting
  runs at known words (and otherwise at single characters) keeps merges inside words, which
  is what a student expects to see (``法国 / 的 / 首都 / 是``) and what a small model learns
  from best. The lexicon is data (the world's Chinese words plus common function words), so the
  rule is the same regex that Hugging Face ``tokenizers`` runs (its ``Split`` pre-tokenizer,
  Oniguruma dialect, which supports ``\\p{Han}``, ``\\p{L}``, ``\\p{N}`` and lookahead).

Needs the third-party ``regex`` module (Unicode properties); the standard ``re`` lacks them.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import regex

END_OF_WORD = "</w>"

# Pieces 2..7 of the rule above; the lexicon alternation is put in front of it.
_GPT_TAIL = (
    r"\p{Han}"
    r"|'(?:s|t|re|ve|m|ll|d)"
    r"| ?(?:(?!\p{Han})\p{L})+"
    r"| ?\p{N}"
    r"| ?[^\s\p{L}\p{N}]+"
    r"|\s+(?!\S)"
    r"|\s+"
)


def build_gpt_pattern(cjk_lexicon: Iterable[str] = ()) -> str:
    """The gpt-mode pre-tokenizer regex, with the lexicon words tried longest first.

    Example: build_gpt_pattern(["首都"]).startswith("首都|")  # True
    """
    words = sorted({w for w in cjk_lexicon if w}, key=lambda w: (-len(w), w))
    for w in words:
        if not all(regex.fullmatch(r"\p{Han}", ch) for ch in w):
            raise ValueError(f"lexicon entries must be Han characters only, got {w!r}")
    if not words:
        return _GPT_TAIL
    return "|".join(regex.escape(w) for w in words) + "|" + _GPT_TAIL


@lru_cache(maxsize=16)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def split_gpt(text: str, pattern: str) -> list[str]:
    """Cut ``text`` into pre-tokens; the pieces always join back to ``text``.

    Text between two matches (possible only for exotic input) is kept as its own piece, like
    Hugging Face's ``Split(behavior="isolated")``.

    Example: split_gpt("The capital is 9.11", build_gpt_pattern())
             → ['The', ' capital', ' is', ' 9', '.', '1', '1']
    """
    pieces: list[str] = []
    end = 0
    for match in _compiled(pattern).finditer(text):
        if match.start() > end:
            pieces.append(text[end : match.start()])
        if match.end() > match.start():
            pieces.append(match.group())
        end = match.end()
    if end < len(text):
        pieces.append(text[end:])
    return pieces


def split_classic(text: str) -> list[str]:
    """Whitespace-separated words (the textbook rule; whitespace is dropped).

    Example: split_classic("low  lower\\nnewest") → ['low', 'lower', 'newest']
    """
    return text.split()


def classic_symbols(word: str) -> list[str]:
    """A word's starting symbols in classic mode: its characters, then ``</w>``.

    Example: classic_symbols("low") → ['l', 'o', 'w', '</w>']
    """
    return [*word, END_OF_WORD]
