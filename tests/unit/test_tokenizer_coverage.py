"""The model tokenizer covers what people type: 200 classroom prompts, printable ASCII, common
Han characters; byte fallback is left for the rare rest (emoji, rare characters)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.text.corpus import BASE_CHARS, han_characters
from core.text.tokenizer import BPETokenizer, byte_fallback_share, train_bpe

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ROOT / "tests" / "fixtures" / "classroom_prompts.json"


@pytest.fixture(scope="module")
def prompts() -> dict[str, list[str]]:
    return json.loads(PROMPTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def shipped() -> BPETokenizer:
    return BPETokenizer.load(ROOT / "assets" / "corpus" / "tokenizer")


def test_fixture_is_200_distinct_prompts_in_both_languages(prompts):
    assert len(prompts["en"]) == 100 and len(prompts["zh"]) == 100
    assert len(set(prompts["en"])) == 100 and len(set(prompts["zh"])) == 100
    import regex

    assert all(regex.search(r"\p{Han}", p) for p in prompts["zh"])
    # The issue's own examples are there.
    assert {"France's capital is", "The French capital is"} <= set(prompts["en"])
    assert {"法国的首都叫", "法国首都是"} <= set(prompts["zh"])


def test_byte_fallback_share_on_classroom_prompts_at_most_one_percent(prompts, shipped):
    for lang in ("en", "zh"):
        result = byte_fallback_share(shipped, prompts[lang])
        assert result["chars"] > 800
        assert result["share"] <= 0.01, (lang, result)
    both = byte_fallback_share(shipped, prompts["en"] + prompts["zh"])
    assert both["share"] <= 0.01, both


@pytest.mark.parametrize("name", ["classic", "modern"])
def test_shipped_models_use_the_corpus_tokenizer(name, shipped):
    model_tok = BPETokenizer.load(ROOT / "assets" / "models" / name)
    assert model_tok.vocab() == shipped.vocab()


def test_words_students_type_are_single_tokens(shipped):
    for ch in "'叫就请的了吗呢吧？！，。“”":
        assert len(shipped.encode(ch)) == 1, ch
    for ch in BASE_CHARS:
        assert len(shipped.encode(ch, allow_special=False)) == 1, repr(ch)
    assert shipped.tokens("France's capital is") == ["France", "'s", " capital", " is"]
    assert shipped.tokens("法国的首都叫") == ["法国", "的", "首都", "叫"]


def test_vocabulary_size_and_han_list(shipped):
    assert 4000 <= shipped.vocab_size <= 8000
    han = han_characters()
    assert len(han) == len(set(han)) >= 3755
    vocab = set(shipped.vocab())
    assert set(han) <= vocab
    # GB2312 level 1 starts with 啊 (0xB0A1) and ends with 座 (0xD7F9).
    assert han[0] == "啊" and han[3754] == "座"


def test_han_list_is_reproducible():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_han_chars.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_byte_fallback_share_counts_characters_not_bytes():
    tok = train_bpe("ab ab", 1, "gpt", cjk_lexicon=()).tokenizer
    result = byte_fallback_share(tok, ["ab 🙂", "é"])  # 🙂: 4 bytes, é: 2 bytes, neither known
    assert result == {"chars": 5, "byte_chars": 2, "share": 2 / 5}
    assert byte_fallback_share(tok, []) == {"chars": 0, "byte_chars": 0, "share": 0.0}
    classic = train_bpe("ab ab", 1).tokenizer
    with pytest.raises(ValueError):
        byte_fallback_share(classic, ["ab"])


def test_extra_chars_join_the_base_vocabulary():
    tok = train_bpe("ab ab", 1, "gpt", cjk_lexicon=(), extra_chars="叫x").tokenizer
    assert tok.tokens("叫") == ["叫"] and tok.vocab().index("叫") < tok.vocab().index("x")
    assert tok.vocab().count("a") == 1
    again = train_bpe("ab ab", 1, "gpt", cjk_lexicon=(), extra_chars=["叫", "a"]).tokenizer
    assert again.vocab().count("a") == 1
    with pytest.raises(ValueError):
        train_bpe("ab ab", 1, "classic", extra_chars="x")
