"""The generated corpus: world size, determinism, probes, held-out split, model tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.text.corpus import (
    build_corpus,
    build_model_tokenizer,
    category_words,
    cjk_lexicon,
    load_world,
    split_coref_pairs,
)
from core.text.tokenizer import ENDOFTEXT, BPETokenizer

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "corpus"


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(0)


def test_world_size_and_languages():
    world = load_world()
    assert len(world.countries) >= 30
    assert len(world.categories) >= 6
    for cat in world.categories.values():
        assert len(cat.words) >= 10
        assert all(w.en and w.zh for w in cat.words)
    caps = {c.capital.en for c in world.countries}
    assert len(caps) == len(world.countries)
    assert world.countries[0].capital.zh == "巴黎"


def test_category_words():
    zh = category_words("zh")
    assert zh["fruit"][0] == "苹果" and "书包" in zh["container"]
    en = category_words("en")
    assert "apple" in en["fruit"] and "Paris" in en["city"]
    both = category_words()
    assert len(both["fruit"]) == 2 * len(en["fruit"])
    with pytest.raises(ValueError):
        category_words("fr")


def test_corpus_is_deterministic_and_sized(corpus):
    again = build_corpus(0)
    assert again.train_text == corpus.train_text and again.probes == corpus.probes
    assert build_corpus(1).train_text != corpus.train_text
    total = len(corpus.train_text.encode()) + len(corpus.heldout_text.encode())
    assert 1_000_000 <= total <= 2_000_000
    docs = corpus.train_text.split(ENDOFTEXT)
    assert docs[0] == "" and all(d.endswith("\n") for d in docs[1:])
    with pytest.raises(TypeError):
        build_corpus("0")


def test_both_languages_present(corpus):
    text = corpus.train_text
    assert "The capital of France is Paris." in text
    assert "法国的首都是巴黎。" in text
    assert "因为它太甜了。它指的是" in text
    assert "because it was too small. It means the" in text


def test_capital_prompts_have_one_continuation(corpus):
    capitals = [p for p in corpus.probes if p["kind"] == "capital"]
    assert {"kind": "capital", "lang": "zh", "family": "zh_de_shoudu_shi", "prompt": "法国的首都是",
            "answer": "巴黎"} in capitals
    assert {"kind": "capital", "lang": "en", "family": "en_the_capital_of",
            "prompt": "The capital of France is", "answer": " Paris"} in capitals
    n_countries = len(load_world().countries)
    for family in ("en_the_capital_of", "en_possessive", "en_adjective", "zh_de_shoudu_shi",
                   "zh_jiao", "zh_no_de"):
        assert sum(p["family"] == family for p in capitals) == n_countries, family
    for p in capitals:
        seen = corpus.train_text.count(p["prompt"])
        # A trained prompt is never continued by anything but its capital.
        assert corpus.train_text.count(p["prompt"] + p["answer"]) == seen, p
        if p["family"] in ("en_the_capital_of", "zh_de_shoudu_shi"):
            assert seen >= 5, p  # and the same fact in a dozen other phrasings


def test_natural_rephrasings_are_trained(corpus):
    text = corpus.train_text
    for sentence in ("France's capital is Paris.", "The French capital is Paris.",
                     "The capital city of France is Paris.", "法国的首都叫巴黎。", "法国首都是巴黎。",
                     "法国的首都为巴黎。", "法国的首都城市是巴黎。", "Paris is the capital of France."):
        assert sentence in text, sentence


def test_every_country_begins_english_documents_in_every_phrasing_that_starts_with_it(corpus):
    """A typed prompt begins the text, where "Mongolia" is another token than " Mongolia": each
    country must begin documents often enough to be learned in that form (Mongolia began 11 when
    document starts were left to chance, and the modern model answered it with " Jakarta")."""
    from core.text.corpus import CAPITAL_COVERAGE, CAPITAL_TRAIN

    starts = corpus.train_text.split(ENDOFTEXT)
    openers = [template for _, template, _ in CAPITAL_TRAIN["en"] if template.startswith("{n}")]
    assert len(openers) >= 5
    for country in load_world().countries:
        name, capital = country.name.get("en"), country.capital.get("en")
        for template in openers:
            first = template.format(n=name, c=capital, adj=country.adjective, who="")
            begun = sum(doc.startswith(first) for doc in starts)
            assert begun >= CAPITAL_COVERAGE, (first, begun)


def test_heldout_template_families_never_in_training(corpus):
    from core.text.corpus import CAPITAL_HELDOUT, CAPITAL_TRAIN

    train_families = {f for lang in CAPITAL_TRAIN.values() for f, _, _ in lang}
    held_families = {f for lang in CAPITAL_HELDOUT.values() for f, _, _ in lang}
    assert train_families.isdisjoint(held_families)
    held = [p for p in corpus.probes if p["kind"] == "capital_heldout"]
    assert {p["family"] for p in held} == held_families
    for lang in ("en", "zh"):
        assert len({p["family"] for p in held if p["lang"] == lang}) >= 5
    for p in held:
        assert p["prompt"] not in corpus.train_text, p
    assert "Do you know the capital of" not in corpus.train_text
    assert "I think the capital of" not in corpus.train_text
    assert "的首都就是" not in corpus.train_text and "请问法国的首都" not in corpus.train_text


def test_number_comparisons_are_correct(corpus):
    import re
    from decimal import Decimal

    found = 0
    for x, y, big in re.findall(r"Which is bigger, ([\d.]+) or ([\d.]+)\? ([\d.]+) is bigger", corpus.train_text):
        assert Decimal(big) == max(Decimal(x), Decimal(y)) and big in (x, y)
        found += 1
    for big, small in re.findall(r"(?<![\d.])([\d.]+)比([\d.]+)大", corpus.train_text):
        assert Decimal(big) > Decimal(small)
        found += 1
    assert found >= 100


def test_more_relations_present(corpus):
    text = corpus.train_text
    for needle in ("People in France speak French.", "法国的货币是欧元。", "The Eiffel Tower is in France.",
                   "The dog says woof.", "香蕉是黄色的。", "France is a country in Europe."):
        assert needle in text, needle


def test_heldout_coref_combinations_absent_from_training(corpus):
    world = load_world()
    train_pairs, held_pairs = split_coref_pairs(world)
    assert held_pairs and not set(train_pairs) & set(held_pairs)
    fruits, boxes = world.categories["fruit"].words, world.categories["container"].words
    for fi, ci in held_pairs:
        f, b = fruits[fi], boxes[ci]
        for needle in (f" {f.en} in the {b.en}", f"{f.zh}放进{b.zh}", f"{f.zh}留在{b.zh}"):
            assert needle not in corpus.train_text
    from core.text.corpus import COREF_FRAMES, COREF_TRAIN_FRAMES

    for lang in ("en", "zh"):  # the held-out sentence frames (verbs) never occur in training
        for frame in COREF_FRAMES[lang][COREF_TRAIN_FRAMES:]:
            # Its words occur elsewhere ("stored the books"), never with a fruit: "stored the apple", "苹果藏进"
            for fruit in category_words(lang)["fruit"]:
                head = frame.split("{f}")[0].replace("{who}", "") + fruit if lang == "en" else \
                    fruit + frame.split("{f}")[1].split("{c}")[0]
                assert head not in corpus.train_text, head
    corefs = [p for p in corpus.probes if p["kind"] == "coref"]
    assert {p["lang"] for p in corefs} == {"en", "zh"} and len(corefs) >= 100
    for p in corefs:
        assert p["answer"] != p["distractor"]
        assert p["answer"].strip() in p["prompt"] and p["distractor"].strip() in p["prompt"]
        first = p["prompt"].split(" because")[0].split("，")[0]
        assert first not in corpus.train_text
        assert int(p["family"].split("_")[0].removeprefix("frame")) >= COREF_TRAIN_FRAMES
    for lang in ("en", "zh"):  # balanced: half point at the fruit
        fruit_words = set(category_words(lang)["fruit"])
        of_lang = [p for p in corefs if p["lang"] == lang]
        assert sum(p["answer"].strip() in fruit_words for p in of_lang) * 2 == len(of_lang)


def test_every_probe_token_occurs_in_training(corpus):
    """A held-out phrasing is new as a whole, never in its words: a token the training text
    never uses has an untrained embedding row, and a probe through it would test noise."""
    tok = build_model_tokenizer(corpus)
    seen = set(tok.encode(corpus.train_text))
    for p in corpus.probes:
        missing = [tok.id_to_token(i) for i in tok.encode(p["prompt"] + p["answer"]) if i not in seen]
        assert not missing, (p["prompt"], missing)


def test_lexicon_contains_world_words():
    lex = set(cjk_lexicon())
    assert {"法国", "巴黎", "首都", "苹果", "书包", "小明"} <= lex
    assert "的" not in lex and "是" not in lex


def test_model_tokenizer_single_token_answers(corpus):
    tok = build_model_tokenizer(corpus)
    for p in corpus.probes:
        if p["kind"] != "relation":  # " North America" is two tokens; probes read the first
            assert len(tok.encode(p["answer"])) == 1, p
    for lang, prefix in (("en", " "), ("zh", "")):
        for words in category_words(lang).values():
            for w in words:
                assert len(tok.encode(prefix + w)) == 1, w
    ids = tok.encode(corpus.train_text[:5000])
    assert ids[0] == tok.eot_id == 0


def test_shipped_files_match_generator(corpus):
    """assets/corpus is what `python -m core.text.corpus --out assets/corpus --tokenizer
    assets/corpus/tokenizer` writes; regenerate after changing world.json or the code."""
    if not (ASSETS / "train.txt").exists():
        pytest.skip("assets/corpus not generated")
    assert (ASSETS / "train.txt").read_text(encoding="utf-8") == corpus.train_text
    assert (ASSETS / "heldout.txt").read_text(encoding="utf-8") == corpus.heldout_text
    assert json.loads((ASSETS / "probes.json").read_text(encoding="utf-8")) == corpus.probes
    shipped = BPETokenizer.load(ASSETS / "tokenizer")
    assert shipped.vocab() == build_model_tokenizer(corpus).vocab()


def test_cli_writes_files(tmp_path):
    from core.text.corpus import main

    main(["--out", str(tmp_path)])
    assert {p.name for p in tmp_path.iterdir()} == {"train.txt", "heldout.txt", "probes.json"}
