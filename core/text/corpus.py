"""The bilingual (English + 中文) training corpus, generated from a small world, and the
tokenizer our model uses.

Design, for a ~1-3 M-parameter GPT (4 layers, d_model 128, context 128) to learn exactly what
the pages show, and to keep working when a teacher types their own phrasing:

* **Facts, in many surface forms** - every country's capital in about a dozen phrasings per
  language ("The capital of France is", "France's capital is", "The French capital is", "the
  capital city of", "What is the capital of France? It is", "法国的首都是/叫/为", "法国首都是",
  "法国的首都城市是", Q-A lines, paragraphs with several facts), plus more relations the pages
  can use: language, currency, continent, a famous landmark, animal sounds, fruit colours and
  number comparisons (9.11 vs 9.9, compared correctly). No trained phrasing continues another
  trained probe prompt differently (``"The capital of France is"`` is always followed by
  ``" Paris"``).
* **Held out by template, not just by fact** - the phrasings are split into *template
  families*: the train families generate ``train.txt``; the held-out families never occur in
  it (they make ``heldout.txt`` and the ``capital_heldout`` probes), so a probe on them asks
  whether the model learned the fact or only the sentence.
* **Categories** - each category's words appear in the same sentence frames ("The {x} is a
  sweet fruit." / "{x}是一种很甜的水果。"), so embeddings cluster by category.
* **Coreference** (the textbook example) - "Tom put the apple in the bag because it was too
  sweet. It means the apple." / "小明把苹果放进书包，因为它太甜了。它指的是苹果。" with many verbs
  and containers. A fruit trait (sweet, ripe, sour, soft) points back at the fruit, a container
  trait (small, full, narrow) at the container. Probes use fruit/container pairs that never
  occur together in training *and* sentence frames (verbs) that never occur in training.
* **Stories and classroom lines** - short multi-sentence documents mixing everything with
  pronouns, and everyday lines with the words students type (请, 叫, 就, "I think", "Do you").

Documents are in one language each and every one is preceded by ``<|endoftext|>`` and ends
with a newline, so ``train.txt`` reads as one document per line. All randomness comes from
``random.Random(seed)``; the same seed gives byte-identical files.

CLI: ``python -m core.text.corpus --out assets/corpus`` writes train.txt, heldout.txt, probes.json
(and the model tokenizer to ``<out>/tokenizer`` with ``--tokenizer``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.text.tokenizer import ENDOFTEXT, BPETokenizer, train_bpe

ASSETS = Path(__file__).resolve().parents[2] / "assets"
WORLD_PATH = ASSETS / "world.json"
HAN_CHARS_PATH = ASSETS / "han_chars.txt"
TARGET_TRAIN_BYTES = 1_800_000  # UTF-8 bytes of train.txt
# Every trained capital template is written out with every country this many times (on top of
# the weighted random sentences), so a rare family still meets every fact: "People call the
# capital of Sweden ..." once in 1.7 MB was too little for a 1M-parameter model to get right.
CAPITAL_COVERAGE = 2
TARGET_HELDOUT_BYTES = 150_000
# More than the corpus can use: training stops once every pre-token of train.txt is a single
# token, so every world word is one token.
MODEL_TOKENIZER_MERGES = 4000
# Characters every model tokenizer has as single tokens even when the corpus lacks them: all
# printable ASCII (letters, digits, punctuation, space), tab and newline, and the punctuation
# people type in Chinese text. Together with assets/han_chars.txt (GB2312 level 1: the 3,755
# most common Han characters) this keeps byte fallback for rare characters and emoji only.
EXTRA_PUNCTUATION = "，。、？！：；“”‘’（）《》【】…—·～￥€£°×÷「」『』"
BASE_CHARS = "".join(chr(c) for c in range(0x20, 0x7F)) + "\t\n" + EXTRA_PUNCTUATION


# --------------------------------------------------------------------------------------------
# The world
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


@dataclass(frozen=True)
class Country:
    name: Word
    capital: Word
    adjective: str = ""  # English adjective: "French" ("The French capital is Paris.")
    language: Word | None = None
    currency: Word | None = None
    continent: Word | None = None
    landmark: Word | None = None


@dataclass(frozen=True)
class Person:
    name: Word
    gender: str  # "m" | "f"

    def pronoun(self, lang: str) -> str:
        if lang == "zh":
            return "他" if self.gender == "m" else "她"
        return "He" if self.gender == "m" else "She"


@dataclass(frozen=True)
class Category:
    key: str
    name: Word
    traits: tuple[Word, ...]
    words: tuple[Word, ...]


@dataclass(frozen=True)
class World:
    countries: tuple[Country, ...]
    categories: dict[str, Category]
    people: tuple[Person, ...]
    zh_function_words: tuple[str, ...]
    animal_sounds: dict[str, Word] = field(default_factory=dict)  # English animal word -> sound
    fruit_colours: dict[str, str] = field(default_factory=dict)  # English fruit -> English colour


def load_world(path: str | Path = WORLD_PATH) -> World:
    """Read ``assets/world.json`` (human-readable; edit it to change the corpus).

    Example: load_world().countries[0].capital.zh → '巴黎'
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    w = lambda d: Word(d["en"], d["zh"])  # noqa: E731
    opt = lambda d: w(d) if d else None  # noqa: E731
    continents = {k: w(v) for k, v in data.get("continents", {}).items()}
    world = World(
        countries=tuple(
            Country(w(c), w(c["capital"]), c.get("adjective", ""), opt(c.get("language")),
                    opt(c.get("currency")), continents.get(c.get("continent", "")),
                    opt(c.get("landmark")))
            for c in data["countries"]),
        categories={
            key: Category(key, w(c["name"]), tuple(map(w, c["traits"])), tuple(map(w, c["words"])))
            for key, c in data["categories"].items()
        },
        people=tuple(Person(w(p), p["gender"]) for p in data["people"]),
        zh_function_words=tuple(data.get("zh_function_words", ())),
        animal_sounds={k: w(v) for k, v in data.get("animal_sounds", {}).items()},
        fruit_colours=dict(data.get("fruit_colours", {})),
    )
    _check_world(world)
    return world


def _check_world(world: World) -> None:
    if len(world.countries) < 30:
        raise ValueError("world.json needs at least 30 countries")
    for cat in world.categories.values():
        if len(cat.words) < 10:
            raise ValueError(f"category {cat.key!r} needs at least 10 words")
    for key in ("fruit", "container"):
        if key not in world.categories:
            raise ValueError(f"world.json needs a {key!r} category (coreference sentences)")
    animals = {x.en for x in world.categories.get("animal", Category("", Word("", ""), (), ())).words}
    if set(world.animal_sounds) - animals:
        raise ValueError(f"animal_sounds names unknown animals: {sorted(set(world.animal_sounds) - animals)}")
    fruits = {x.en for x in world.categories["fruit"].words}
    colours = {x.en for x in world.categories.get("colour", Category("", Word("", ""), (), ())).words}
    for fruit, colour in world.fruit_colours.items():
        if fruit not in fruits or colour not in colours:
            raise ValueError(f"fruit_colours: unknown fruit or colour {fruit!r} -> {colour!r}")


@lru_cache(maxsize=1)
def _world() -> World:
    return load_world()


def category_words(lang: str | None = None) -> dict[str, list[str]]:
    """Category → its words (``lang`` "en" or "zh"; None gives both, English then Chinese).
    People's names form the category "person", capitals the category "city" and countries
    "country".

    Example: category_words("zh")["fruit"][0] → '苹果'
    """
    if lang not in (None, "en", "zh"):
        raise ValueError(f"lang must be 'en', 'zh' or None, got {lang!r}")
    world = _world()
    langs = ("en", "zh") if lang is None else (lang,)
    groups: dict[str, list[Word]] = {k: list(c.words) for k, c in world.categories.items()}
    groups["person"] = [p.name for p in world.people]
    groups["country"] = [c.name for c in world.countries]
    groups["city"] = [c.capital for c in world.countries]
    return {k: [wd.get(l) for l in langs for wd in words] for k, words in groups.items()}


def cjk_lexicon(world: World | None = None) -> list[str]:
    """Chinese words the gpt pre-tokenizer keeps together: every Chinese word of the world
    (2+ characters) plus common function words.

    Example: "首都" in cjk_lexicon() → True
    """
    world = world or _world()
    words = set(world.zh_function_words)
    for c in world.countries:
        words |= {c.name.zh, c.capital.zh}
        words |= {x.zh for x in (c.language, c.currency, c.continent, c.landmark) if x}
    for cat in world.categories.values():
        words |= {cat.name.zh, *(t.zh for t in cat.traits), *(x.zh for x in cat.words)}
    words |= {p.name.zh for p in world.people}
    words |= {s.zh for s in world.animal_sounds.values()}
    return sorted(w for w in words if len(w) >= 2)


def han_characters(path: str | Path = HAN_CHARS_PATH) -> str:
    """The committed list of common Han characters (one per line; see
    scripts/make_han_chars.py), each a single token of the model tokenizer.

    Example: len(han_characters()) >= 3755 and "请" in han_characters() → True
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return "".join(line.strip() for line in lines if line.strip() and not line.startswith("#"))


# --------------------------------------------------------------------------------------------
# Template families: capitals
# --------------------------------------------------------------------------------------------
# A template is (family, text). {n} country, {c} capital, {adj} English adjective, {who} a
# person. A family whose {c} comes after {n} is a probe family: its prompt is the text up to
# the capital. Families are held out whole: a held-out family never occurs in train.txt.

CAPITAL_TRAIN: dict[str, list[tuple[str, str, int]]] = {  # (family, template, weight)
    "en": [
        ("en_the_capital_of", "The capital of {n} is {c}.", 6),
        ("en_possessive", "{n}'s capital is {c}.", 3),
        ("en_adjective", "The {adj} capital is {c}.", 3),
        ("en_capital_city_of", "The capital city of {n} is {c}.", 2),
        ("en_possessive_city", "{n}'s capital city is {c}.", 2),
        ("en_adjective_city", "The {adj} capital city is {c}.", 1),
        ("en_what_it_is", "What is the capital of {n}? It is {c}.", 2),
        ("en_qa", "Q: What is the capital of {n}? A: {c}.", 2),
        ("en_its_capital", "{n} is a country. Its capital is {c}.", 2),
        ("en_in_country", "In {n}, the capital is {c}.", 1),
        ("en_which_city", "Which city is the capital of {n}? {c} is.", 2),
        ("en_asked", "{who} asked: what is the capital of {n}? The answer is {c}.", 1),
        ("en_said_that", "{who} said that the capital of {n} is {c}.", 1),
        # a possessive after "that": a teacher's "... knows that France's capital is" needs it
        ("en_said_that_possessive", "{who} said that {n}'s capital is {c}.", 1),
        ("en_heard_possessive_city", "I heard that {n}'s capital city is {c}.", 1),
        ("en_we_know", "We know that the capital of {n} is {c}.", 1),
        ("en_calls_its", "{n} calls its capital {c}.", 2),
        ("en_has_capital_called", "{n} has a capital called {c}.", 2),
        ("en_has_capital_city_called", "{n} has a capital city called {c}.", 2),
        ("en_people_call", "People call the capital of {n} {c}.", 2),
        ("en_adjective_call", "The {adj} call their capital {c}.", 2),
        # capital before country: not probes, but the same fact the other way round
        ("en_reverse", "{c} is the capital of {n}.", 3),
        ("en_reverse_city", "{c} is the capital city of {n}.", 1),
        ("en_lives", "{who} lives in {c}, the capital of {n}.", 1),
        ("en_flew", "{who} flew to {c}, the capital of {n}.", 1),
    ],
    "zh": [
        ("zh_de_shoudu_shi", "{n}的首都是{c}。", 6),
        ("zh_jiao", "{n}的首都叫{c}。", 3),
        ("zh_wei", "{n}的首都为{c}。", 2),
        ("zh_no_de", "{n}首都是{c}。", 3),
        ("zh_no_de_jiao", "{n}首都叫{c}。", 1),
        ("zh_city", "{n}的首都城市是{c}。", 2),
        ("zh_qa", "问：{n}的首都在哪里？答：{c}。", 2),
        ("zh_its_capital", "{n}是一个国家，它的首都是{c}。", 2),
        ("zh_which_city", "哪座城市是{n}的首都？是{c}。", 2),
        # questions answered in a short reply ("在巴黎" / "是巴黎"), as people answer them; the
        # question never ends in "的首都是", so "法国的首都是" keeps one continuation
        ("zh_where_at", "{n}的首都在哪里？在{c}。", 2),
        ("zh_where_place", "{n}的首都在什么地方？是{c}。", 1),
        ("zh_speaking_of", "说到{n}，它的首都是{c}。", 1),
        ("zh_flew", "{who}坐飞机去了{n}的首都{c}。", 1),
        ("zh_said", "{who}说{n}的首都是{c}。", 1),
        ("zh_everyone_knows", "大家都知道{n}的首都是{c}。", 1),
        ("zh_did_you_know", "你知道吗？{n}的首都是{c}。", 1),
        ("zh_people_call", "{n}人把首都叫做{c}。", 1),
        ("zh_they_call", "人们把{n}的首都称为{c}。", 1),
        ("zh_reverse", "{c}是{n}的首都。", 3),
        ("zh_lives", "{who}住在{c}，{c}是{n}的首都。", 1),
    ],
}
CAPITAL_HELDOUT: dict[str, list[tuple[str, str, int]]] = {
    "en": [
        ("en_do_you_know", "Do you know the capital of {n}? It is {c}.", 1),
        ("en_i_think", "I think the capital of {n} is {c}.", 1),
        ("en_name_of", "The name of the capital of {n} is {c}.", 1),
        ("en_possessive_called", "{n}'s capital is called {c}.", 1),
        ("en_adjective_city_called", "The {adj} capital city is called {c}.", 1),
        ("en_everyone_knows", "Everyone knows that {n}'s capital is {c}.", 1),
    ],
    "zh": [
        ("zh_qingwen", "请问{n}的首都在哪里？是{c}。", 1),
        ("zh_wo_zhidao", "我知道{n}的首都是{c}。", 1),
        ("zh_jiushi", "{n}的首都就是{c}。", 1),
        ("zh_zhege_guojia", "{n}这个国家的首都是{c}。", 1),
        ("zh_jiaozuo", "{n}首都叫做{c}。", 1),
        ("zh_city_jiao", "{n}的首都城市叫{c}。", 1),
    ],
}


def _fill(template: str, c: Country, person: Person, lang: str) -> str:
    return template.format(n=c.name.get(lang), c=c.capital.get(lang), adj=c.adjective,
                           who=person.name.get(lang))


def capital_probe(template: str, c: Country, person: Person, lang: str) -> tuple[str, str] | None:
    """(prompt, answer) of a capital template, or None when the capital comes before the
    country (no prompt to ask). Example: → ("The French capital is", " Paris")"""
    at, after = template.find("{c}"), template.find("{n}")
    if at < 0 or (after >= 0 and at < after) or "{adj}" not in template and after < 0:
        return None
    prompt = _fill(template[:at], c, person, lang)
    if lang == "en":
        if not prompt.endswith(" "):
            return None
        return prompt[:-1], " " + c.capital.en
    return prompt, c.capital.zh


def capital_sentence(c: Country, lang: str, rng: random.Random, person: Person,
                     families: dict[str, list[tuple[str, str, int]]] = CAPITAL_TRAIN) -> str:
    """One fact about a capital in one of the (train) template families, by weight."""
    options = families[lang]
    _, template, _ = rng.choices(options, weights=[w for *_, w in options])[0]
    return _fill(template, c, person, lang)


# --------------------------------------------------------------------------------------------
# Other relations, categories, classroom lines
# --------------------------------------------------------------------------------------------


def relation_sentence(c: Country, lang: str, rng: random.Random) -> str:
    """Language, currency, continent or landmark of a country (the ones it has)."""
    n = c.name.get(lang)
    options: list[str] = []
    if c.language:
        la = c.language.get(lang)
        options += [f"People in {n} speak {la}.", f"The language of {n} is {la}.",
                    f"In {n}, people speak {la}."] \
            if lang == "en" else [f"{n}人说{la}。", f"{n}的语言是{la}。", f"在{n}，人们说{la}。",
                                  f"{n}的语言叫做{la}。", f"{n}人说的语言就是{la}。"]
    if c.currency:
        cu = c.currency.get(lang)
        options += [f"The currency of {n} is the {cu}.", f"In {n}, people pay with the {cu}."] \
            if lang == "en" else [f"{n}的货币是{cu}。", f"在{n}，人们用{cu}买东西。",
                                  f"{n}的货币名叫{cu}。", f"{n}用的钱就是{cu}。"]
    if c.continent:
        co = c.continent.get(lang)
        options += [f"{n} is in {co}.", f"{n} is a country in {co}."] if lang == "en" else \
            [f"{n}在{co}。", f"{n}是{co}的一个国家。", f"{n}这个国家在{co}。"]
    if c.landmark:
        lm = c.landmark.get(lang)
        options += [f"The {lm} is in {n}.", f"{n} is famous for the {lm}."] if lang == "en" else \
            [f"{lm}在{n}。", f"{n}有名的{lm}很漂亮。"]
    return rng.choice(options)


def country_paragraph(c: Country, lang: str, rng: random.Random, person: Person) -> str:
    """A short paragraph with several facts about one country."""
    n, cap = c.name.get(lang), c.capital.get(lang)
    sents: list[str]
    if lang == "en":
        sents = [f"{n} is a country in {c.continent.en}." if c.continent else f"{n} is a country.",
                 rng.choice([f"Its capital is {cap}.", f"The capital of {n} is {cap}.",
                             f"{n}'s capital is {cap}."])]
        if c.language:
            sents.append(f"People there speak {c.language.en}.")
        if c.currency:
            sents.append(f"They pay with the {c.currency.en}.")
        if c.landmark and rng.random() < 0.7:
            sents.append(f"The {c.landmark.en} is in {n}.")
        if rng.random() < 0.5:
            sents.append(f"{person.name.en} wants to visit {cap} one day.")
        return " ".join(sents)
    sents = [f"{n}是{c.continent.zh}的一个国家。" if c.continent else f"{n}是一个国家。",
             rng.choice([f"它的首都是{cap}。", f"{n}的首都是{cap}。", f"{n}首都是{cap}。"])]
    if c.language:
        sents.append(f"那里的人说{c.language.zh}。")
    if c.currency:
        sents.append(f"他们用{c.currency.zh}。")
    if c.landmark and rng.random() < 0.7:
        sents.append(f"{c.landmark.zh}在{n}。")
    if rng.random() < 0.5:
        sents.append(f"{person.name.zh}想去{cap}看看。")
    return "".join(sents)


def category_sentence(cat: Category, x: Word, lang: str, rng: random.Random, person: Person,
                      ) -> str:
    """A sentence frame shared by every word of the category (so they look alike)."""
    who = person.name.get(lang)
    w = x.get(lang)
    t = rng.choice(cat.traits).get(lang)
    frames_en: dict[str, list[str]] = {
        "animal": [f"The {w} is an animal.", f"{who} saw {_a(w)} at the zoo.",
                   f"The {w} can run and sleep.", f"{_a(w).capitalize()} is a {t} animal."],
        "fruit": [f"The {w} is a sweet fruit.", f"{who} ate {_a(w)} after lunch.",
                  f"{who} bought {_a(w)} at the market.", f"A ripe {w} is sweet."],
        "container": [f"The {w} is a container.", f"{who} put a book in the {w}.",
                      f"The {w} is empty.", f"{_a(w).capitalize()} can hold many things."],
        "vehicle": [f"The {w} is a vehicle.", f"{who} went to work by {w}.",
                    f"The {w} is {t}.", f"{who} waited for the {w}."],
        "colour": [f"{who} likes the colour {w}.", f"The door is {w}.",
                   f"{who} painted the wall {w}.", f"The colour {w} is {t}."],
        "food": [f"The {w} is food.", f"{who} had {w} for dinner.",
                 f"The {w} is {t}.", f"{who} made {w} at home."],
        "place": [f"The {w} is a place in the city.", f"{who} went to the {w}.",
                  f"The {w} is {t} today.", f"{who} met a friend at the {w}."],
    }
    frames_zh: dict[str, list[str]] = {
        "animal": [f"{w}是一种动物。", f"{who}在动物园看到了{w}。", f"{w}会跑也会睡觉。",
                   f"{w}是一种很{t}的动物。"],
        "fruit": [f"{w}是一种很甜的水果。", f"{who}午饭后吃了{w}。", f"{who}在市场买了{w}。",
                  f"熟了的{w}很甜。"],
        "container": [f"{w}是一种容器。", f"{who}把一本书放进了{w}。", f"{w}是空的。",
                      f"{w}可以装很多东西。"],
        "vehicle": [f"{w}是一种交通工具。", f"{who}坐{w}去上班。", f"{w}很{t}。", f"{who}在等{w}。"],
        "colour": [f"{who}喜欢{w}。", f"门是{w}的。", f"{who}把墙刷成了{w}。", f"{w}很{t}。"],
        "food": [f"{w}是一种食物。", f"{who}晚饭吃了{w}。", f"{w}很{t}。", f"{who}在家做了{w}。"],
        "place": [f"{w}是城市里的一个地方。", f"{who}去了{w}。", f"{w}今天很{t}。",
                  f"{who}在{w}见了一个朋友。"],
    }
    frames = (frames_en if lang == "en" else frames_zh).get(cat.key)
    if frames is None:  # a category added to world.json without frames of its own
        frames = [f"The {w} is {_a(cat.name.en)}."] if lang == "en" else \
            [f"{w}是一种{cat.name.zh}。"]
    return rng.choice(frames)


def _a(word: str) -> str:
    """English indefinite article. Example: _a("apple") → 'an apple'"""
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def _find_word(words: tuple[Word, ...], en: str) -> Word:
    return next(w for w in words if w.en == en)


def sound_or_colour_sentence(world: World, lang: str, rng: random.Random) -> str:
    """An animal's sound or a fruit's colour."""
    if world.animal_sounds and (not world.fruit_colours or rng.random() < 0.5):
        key = rng.choice(sorted(world.animal_sounds))
        animal = _find_word(world.categories["animal"].words, key).get(lang)
        s = world.animal_sounds[key].get(lang)
        return rng.choice([f"The {animal} says {s}.", f"What does the {animal} say? It says {s}.",
                           f"{_a(animal).capitalize()} goes {s}."] if lang == "en" else
                          [f"{animal}{s}叫。", f"{animal}怎么叫？{s}。", f"{animal}的叫声是{s}。"])
    key = rng.choice(sorted(world.fruit_colours))
    fruit = _find_word(world.categories["fruit"].words, key).get(lang)
    colour = _find_word(world.categories["colour"].words, world.fruit_colours[key]).get(lang)
    return rng.choice([f"The {fruit} is {colour}.", f"What colour is the {fruit}? It is {colour}.",
                       f"A ripe {fruit} is {colour}."] if lang == "en" else
                      [f"{fruit}是{colour}的。", f"{fruit}是什么颜色的？{colour}。",
                       f"熟了的{fruit}是{colour}的。"])


def number_sentence(person: Person, lang: str, rng: random.Random) -> str:
    """A sentence with digits (numbers tokenize digit by digit: 9.11 → 9 . 1 1).

    Example: number_sentence(p, "en", rng) → 'Tom is 12 years old.'
    """
    who = person.name.get(lang)
    age, pages = rng.randint(6, 15), rng.randint(2, 99)
    a, b = rng.randint(1, 9), rng.randint(1, 9)
    hour, minute = rng.randint(6, 11), rng.choice((0, 15, 30, 45))
    if lang == "en":
        return rng.choice([f"{who} is {age} years old.", f"{who} read {pages} pages today.",
                           f"{a} plus {b} is {a + b}.", f"The bus leaves at {hour}:{minute:02d}.",
                           f"{who} ran {a}.{b} kilometres."])
    return rng.choice([f"{who}今年{age}岁。", f"{who}今天看了{pages}页书。", f"{a}加{b}等于{a + b}。",
                       f"公交车{hour}点{minute}分出发。", f"{who}跑了{a}.{b}公里。"])


def comparison_sentence(lang: str, rng: random.Random) -> str:
    """Which of two numbers is bigger, compared correctly as decimals (9.9 > 9.11).

    Example: comparison_sentence("en", rng) → 'Which is bigger, 9.11 or 9.9? 9.9 is bigger.'
    """
    whole = rng.randint(1, 12)
    if rng.random() < 0.6:  # the classic trap: same whole part, different decimal lengths
        x = f"{whole}.{rng.randint(10, 99)}"
        y = f"{whole}.{rng.randint(1, 9)}"
    else:
        x, y = str(rng.randint(1, 99)), str(rng.randint(1, 99))
    if Decimal(x) == Decimal(y):
        y = str(Decimal(y) + 1)
    if rng.random() < 0.5:
        x, y = y, x
    big, small = (x, y) if Decimal(x) > Decimal(y) else (y, x)
    if lang == "en":
        return rng.choice([f"Which is bigger, {x} or {y}? {big} is bigger.",
                           f"{big} is bigger than {small}.", f"{small} is smaller than {big}."])
    return rng.choice([f"{x}和{y}哪个大？{big}大。", f"{big}比{small}大。", f"{small}比{big}小。"])


def classroom_line(world: World, lang: str, rng: random.Random, person: Person) -> str:
    """Everyday lines with the words students type (请, 叫, 就, 知道, I think, Do you)."""
    who, he = person.name.get(lang), person.pronoun(lang)
    cats = world.categories
    pick = lambda key: rng.choice(cats[key].words).get(lang)  # noqa: E731
    fruit, animal, place, food = pick("fruit"), pick("animal"), pick("place"), pick("food")
    if lang == "en":
        return rng.choice([
            f"Hello, my name is {who}.", f"I think the {fruit} is sweet.",
            f"Do you know {who}? Yes, I know {'him' if person.gender == 'm' else 'her'}.",
            f"Everyone knows that the {animal} is an animal.",
            f"Please tell me the name of the {place}.", f"The name of the dog is {who}.",
            f"I think {who} went to the {place}.", f"Do you like {food}? Yes, I do.",
            f"{who} said: \"I'm hungry.\"", f"It's a sunny day, isn't it?",
            f"Can you help me? Of course!", f"{who} doesn't like {food}.",
            f"My friend is called {who}.", f"This animal is called {_a(animal)}.",
            f"The new student is called {who}.", f"{who} stored the books in the library.",
            f"{who} tried to fit the books into one bag.", f"{who} hid the toys under the bed.",
        ])
    return rng.choice([
        f"你好，我叫{who}。", f"请问你叫什么名字？我叫{who}。", f"我知道{who}喜欢{fruit}。",
        f"{who}吃完饭就回家了。", f"这就是{who}的书包。", f"请把{fruit}给我。",
        f"大家都知道{animal}是一种动物。", f"我觉得{food}很好吃。", f"{who}说：“我饿了。”",
        f"{he}就是{who}。", f"请问{place}在哪里？", f"这个国家的名字叫什么？",
        f"我的朋友叫做{who}。", f"这种动物叫做{animal}。", f"新同学名叫{who}。", f"请问{who}在哪里？",
        f"{who}把书藏在床下。", f"{who}想把书装到书包里。", f"{who}把玩具藏起来了。",
    ])


# --------------------------------------------------------------------------------------------
# Coreference
# --------------------------------------------------------------------------------------------
# Sentence frames ("verbs"): the first ones make train.txt, the held-out ones only probes and
# heldout.txt. Frames 0 and 1 are the original "put"/"left" (the pages' presets).

COREF_FRAMES: dict[str, list[str]] = {
    "en": [
        "{who} put the {f} in the {c}",
        "{who} left the {f} in the {c}",
        "{who} placed the {f} in the {c}",
        "{who} dropped the {f} into the {c}",
        "{who} packed the {f} in the {c}",
        "{who} kept the {f} in the {c}",
        "{who} hid the {f} in the {c}",
        "{who} pushed the {f} into the {c}",
        "{who} wanted to put the {f} in the {c}",
        "{who} could not get the {f} into the {c}",
        "{who} carried the {f} in the {c}",
        "{who} forgot the {f} in the {c}",
        # held out:
        "{who} stored the {f} in the {c}",
        "{who} tried to fit the {f} into the {c}",
    ],
    "zh": [
        "{who}把{f}放进{c}",
        "{who}把{f}留在{c}里",
        "{who}把{f}装进{c}",
        "{who}把{f}塞进{c}",
        "{who}把{f}放在{c}里",
        "{who}把{f}扔进{c}",
        "{who}把{f}带在{c}里",
        "{who}把{f}收进{c}",
        "{who}要把{f}放到{c}里",
        "{who}没能把{f}塞进{c}",
        "{who}把{f}搬进{c}",
        "{who}把{f}忘在{c}里",
        # held out:
        "{who}把{f}藏进{c}",
        "{who}想把{f}装到{c}里",
    ],
}
# Frames 0..11 train, 12.. held out. The multi-word frames ("wanted to put", "could not get
# ... into") are there so that copying the noun does not hinge on one familiar verb: with
# only one-word verbs the classic model copied the wrong fruit after "tried to fit".
COREF_TRAIN_FRAMES = 12
COREF_QUESTIONS: dict[str, list[str]] = {
    "en": [" It means the", " Here \"it\" means the", " So \"it\" is the"],
    "zh": ["它指的是", "这里的“它”指的是", "所以“它”是"],
}


@dataclass(frozen=True)
class CorefItem:
    person: Person
    fruit: Word
    container: Word
    trait: Word
    refers_to_fruit: bool
    verb: int  # which sentence frame (COREF_FRAMES index)
    question: int = 0  # which question (COREF_QUESTIONS index)

    def referent(self) -> Word:
        return self.fruit if self.refers_to_fruit else self.container

    def distractor(self) -> Word:
        return self.container if self.refers_to_fruit else self.fruit

    def prompt(self, lang: str) -> str:
        """The text up to (not including) the referent."""
        who, f, c, t = (x.get(lang) for x in (self.person.name, self.fruit, self.container,
                                              self.trait))
        first = COREF_FRAMES[lang][self.verb].format(who=who, f=f, c=c)
        tail = f" because it was too {t}." if lang == "en" else f"，因为它太{t}了。"
        return first + tail + COREF_QUESTIONS[lang][self.question]

    def text(self, lang: str) -> str:
        answer = self.referent().get(lang)
        return self.prompt(lang) + (f" {answer}." if lang == "en" else f"{answer}。")


def coref_item(world: World, rng: random.Random, pairs: list[tuple[int, int]],
               frames: range = range(COREF_TRAIN_FRAMES)) -> CorefItem:
    fruits = world.categories["fruit"]
    boxes = world.categories["container"]
    fi, ci = rng.choice(pairs)
    to_fruit = rng.random() < 0.5
    trait = rng.choice(fruits.traits if to_fruit else boxes.traits)
    question = rng.choices(range(3), weights=(4, 1, 1))[0]
    return CorefItem(rng.choice(world.people), fruits.words[fi], boxes.words[ci], trait,
                     to_fruit, rng.choice(frames), question)


def story(world: World, lang: str, rng: random.Random,
          coref_pairs: list[tuple[int, int]]) -> str:
    """A short story with pronouns that refer back across sentences. Fruit and container
    appear together only as an allowed pair (held-out pairs stay unseen)."""
    cats = world.categories
    p, q = rng.sample(world.people, 2)
    he = p.pronoun(lang)
    pick = lambda key: rng.choice(cats[key].words).get(lang)  # noqa: E731
    place, animal, vehicle = pick("place"), pick("animal"), pick("vehicle")
    colour, food = pick("colour"), pick("food")
    fi, ci = rng.choice(coref_pairs)
    fruit = cats["fruit"].words[fi].get(lang)
    box = cats["container"].words[ci].get(lang)
    c = rng.choice(world.countries)
    a, b = p.name.get(lang), q.name.get(lang)
    if lang == "en":
        options = [
            f"{a} went to the {place}. {he} saw {_a(animal)} there. Then {he.lower()} ate "
            f"{_a(fruit)} and went home by {vehicle}.",
            f"{a} has {_a(colour)} {box}. {he} keeps {_a(fruit)} in it. The {fruit} is sweet.",
            f"{a} and {b} went to the {place} by {vehicle}. {b} bought some {food}. "
            f"They were happy.",
            f"{a} visited {c.capital.en}, the capital of {c.name.en}. {he} liked the {food} "
            f"there. The capital of {c.name.en} is {c.capital.en}.",
            f"{a} put the {fruit} in the {box}. Later {he.lower()} took the {fruit} out of "
            f"the {box} and ate it.",
        ]
    else:
        options = [
            f"{a}去了{place}。{he}在那里看到了{animal}。然后{he}吃了{fruit}，坐{vehicle}回家了。",
            f"{a}有一个{colour}的{box}。{he}把{fruit}放在里面。{fruit}很甜。",
            f"{a}和{b}坐{vehicle}去了{place}。{b}买了{food}。他们很开心。",
            f"{a}去了{c.name.zh}的首都{c.capital.zh}。{he}喜欢那里的{food}。"
            f"{c.name.zh}的首都是{c.capital.zh}。",
            f"{a}把{fruit}放进{box}。后来{he}把{fruit}拿出来吃了。",
        ]
    opening = number_sentence(p, lang, rng) + _sep(lang) if rng.random() < 0.5 else ""
    return opening + rng.choice(options)


# --------------------------------------------------------------------------------------------
# Documents and the corpus
# --------------------------------------------------------------------------------------------


def _sep(lang: str) -> str:
    return " " if lang == "en" else ""


DOC_KINDS = ("capital", "paragraph", "relation", "category", "coref", "story", "sound_colour",
             "number", "classroom")
DOC_WEIGHTS = (3.0, 1.2, 1.2, 1.8, 5.5, 1.0, 0.7, 0.6, 1.0)


def make_document(world: World, lang: str, rng: random.Random,
                  coref_pairs: list[tuple[int, int]]) -> str:
    """One document (one language): facts, categories, coreference, a story or classroom lines."""
    kind = rng.choices(DOC_KINDS, weights=DOC_WEIGHTS)[0]
    n = rng.randint(2, 5)
    people = world.people
    if kind == "capital":
        parts = [capital_sentence(rng.choice(world.countries), lang, rng, rng.choice(people))
                 for _ in range(n)]
    elif kind == "paragraph":
        parts = [country_paragraph(rng.choice(world.countries), lang, rng, rng.choice(people))]
    elif kind == "relation":
        parts = [relation_sentence(rng.choice(world.countries), lang, rng) for _ in range(n)]
    elif kind == "category":
        cat = rng.choice(list(world.categories.values()))
        parts = [category_sentence(cat, rng.choice(cat.words), lang, rng, rng.choice(people))
                 for _ in range(n)]
    elif kind == "coref":
        parts = [coref_item(world, rng, coref_pairs).text(lang) for _ in range(rng.randint(1, 3))]
    elif kind == "story":
        parts = [story(world, lang, rng, coref_pairs)]
    elif kind == "sound_colour":
        parts = [sound_or_colour_sentence(world, lang, rng) for _ in range(n)]
    elif kind == "number":
        parts = [comparison_sentence(lang, rng) if rng.random() < 0.6 else
                 number_sentence(rng.choice(people), lang, rng) for _ in range(n)]
    else:
        parts = [classroom_line(world, lang, rng, rng.choice(people)) for _ in range(n)]
    return _sep(lang).join(parts)


def capital_coverage_documents(world: World, rng: random.Random,
                               copies: int = CAPITAL_COVERAGE) -> list[tuple[str, str]]:
    """(lang, document) pairs that write every trained capital template with every country
    ``copies`` times, shuffled and grouped 2-5 sentences per document like the random ones.

    In English every sentence that starts with the country's name also starts a document of its
    own. A prompt typed into the app starts at the beginning of the text, where the name is a
    different token from the one mid-sentence ("Mongolia", not " Mongolia"); random grouping left
    that token so rare for a few countries (11 document starts for Mongolia) that the modern
    model answered "Mongolia's capital city is" with " Jakarta". Chinese has no such second form.

    Example: len(capital_coverage_documents(load_world(), random.Random(0), 1)) → 549
    """
    docs: list[tuple[str, str]] = []
    for lang in ("en", "zh"):
        sentences: list[str] = []
        openers: list[str] = []
        for _ in range(copies):
            for _, template, _ in CAPITAL_TRAIN[lang]:
                for c in world.countries:
                    sentence = _fill(template, c, rng.choice(world.people), lang)
                    opens = lang == "en" and template.startswith("{n}")
                    (openers if opens else sentences).append(sentence)
        rng.shuffle(openers)
        rng.shuffle(sentences)
        for opener in openers:
            take = rng.randint(1, 4)
            docs.append((lang, _sep(lang).join([opener] + sentences[:take])))
            sentences = sentences[take:]
        while sentences:
            take = rng.randint(2, 5)
            docs.append((lang, _sep(lang).join(sentences[:take])))
            sentences = sentences[take:]
    rng.shuffle(docs)
    return docs


def make_heldout_document(world: World, lang: str, rng: random.Random,
                          coref_pairs: list[tuple[int, int]]) -> str:
    """A held-out document: held-out capital families or held-out coreference (pairs and frames)."""
    if rng.random() < 0.5:
        return _sep(lang).join(
            capital_sentence(rng.choice(world.countries), lang, rng, rng.choice(world.people),
                             CAPITAL_HELDOUT) for _ in range(rng.randint(2, 4)))
    frames = range(len(COREF_FRAMES[lang]))
    return _sep(lang).join(coref_item(world, rng, coref_pairs, frames).text(lang)
                           for _ in range(rng.randint(1, 3)))


def _join(docs: list[str]) -> str:
    return "".join(f"{ENDOFTEXT}{d}\n" for d in docs)


def split_coref_pairs(world: World) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(train, held-out) fruit/container index pairs: a fixed quarter is held out, chosen so
    every fruit and every container still occurs in training with other partners.

    Example: len(split_coref_pairs(load_world())[1]) → 36 (12 fruits × 12 containers / 4)
    """
    nf = len(world.categories["fruit"].words)
    nc = len(world.categories["container"].words)
    train, held = [], []
    for fi in range(nf):
        for ci in range(nc):
            (held if (fi + ci) % 4 == 0 else train).append((fi, ci))
    return train, held


@dataclass
class Corpus:
    """Generated text plus probes. ``train_text``/``heldout_text`` are exactly what the files
    hold; ``probes`` are dicts with kind, lang, prompt, answer (the next token's text, e.g.
    " Paris" or "巴黎"), for template probes the template family, and for coref the
    distractor. Kinds: "capital" (train families), "capital_heldout" (held-out families),
    "coref" (held-out pairs in held-out frames), "coref_trained_frame" (held-out pairs in
    train frames), "relation" (language / currency / continent, train phrasing)."""

    seed: int
    train_text: str
    heldout_text: str
    probes: list[dict[str, Any]] = field(default_factory=list)


def _capital_probes(world: World, families: dict[str, list[tuple[str, str, int]]], kind: str,
                    rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        for family, template, _ in families[lang]:
            for c in world.countries:
                made = capital_probe(template, c, rng.choice(world.people), lang)
                if made is None:
                    continue
                out.append({"kind": kind, "lang": lang, "family": family, "prompt": made[0],
                            "answer": made[1]})
    return out


def _relation_probes(world: World) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        for c in world.countries:
            n = c.name.get(lang)
            rows = []
            if c.language:
                rows.append(("language", f"People in {n} speak" if lang == "en" else f"{n}的语言是",
                             c.language))
            if c.currency:
                rows.append(("currency", f"The currency of {n} is the" if lang == "en"
                             else f"{n}的货币是", c.currency))
            if c.continent:
                rows.append(("continent", f"{n} is a country in" if lang == "en"
                             else f"{n}是", c.continent))
            for family, prompt, word in rows:
                if family == "continent" and lang == "zh":
                    continue  # "{n}是" continues in many ways
                out.append({"kind": "relation", "lang": lang, "family": family, "prompt": prompt,
                            "answer": (" " if lang == "en" else "") + word.get(lang)})
    return out


def _coref_probes(world: World, rng: random.Random, pairs: list[tuple[int, int]],
                  frames: range, kind: str, per_lang: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        for i in range(per_lang):
            item = coref_item(world, rng, pairs, frames)
            to_fruit = i % 2 == 0  # balance: even probes point at the fruit, odd at the container
            if item.refers_to_fruit != to_fruit:
                cat = world.categories["fruit" if to_fruit else "container"]
                item = CorefItem(item.person, item.fruit, item.container,
                                 rng.choice(cat.traits), to_fruit, item.verb, item.question)
            space = " " if lang == "en" else ""
            out.append({
                "kind": kind, "lang": lang, "family": f"frame{item.verb}_q{item.question}",
                "prompt": item.prompt(lang),
                "answer": space + item.referent().get(lang),
                "distractor": space + item.distractor().get(lang),
            })
    return out


def build_corpus(seed: int = 0, *, train_bytes: int = TARGET_TRAIN_BYTES,
                 heldout_bytes: int = TARGET_HELDOUT_BYTES) -> Corpus:
    """Generate the corpus deterministically from ``seed``.

    Example: build_corpus(0).probes[0] → {'kind': 'capital', 'lang': 'en', 'family':
             'en_the_capital_of', 'prompt': 'The capital of France is', 'answer': ' Paris'}
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if train_bytes <= 0 or heldout_bytes <= 0:
        raise ValueError("train_bytes and heldout_bytes must be positive")
    world = _world()
    train_pairs, held_pairs = split_coref_pairs(world)
    rng = random.Random(seed)

    def generate(target: int, maker: Callable[[str], str]) -> list[str]:
        docs: list[str] = []
        size = 0
        while size < target:
            lang = "en" if len(docs) % 2 == 0 else "zh"
            doc = maker(lang)
            docs.append(doc)
            size += len(ENDOFTEXT) + len(doc.encode("utf-8")) + 1
        return docs

    coverage = capital_coverage_documents(world, random.Random(seed + 31))
    coverage_bytes = sum(len(ENDOFTEXT) + len(d.encode("utf-8")) + 1 for _, d in coverage)
    random_docs = generate(max(train_bytes - coverage_bytes, 0),
                           lambda lang: make_document(world, lang, rng, train_pairs))
    # the coverage documents go in at random places, so no stretch of the file is all capitals
    merged = list(random_docs)
    insert_rng = random.Random(seed + 37)
    for _, doc in coverage:
        merged.insert(insert_rng.randint(0, len(merged)), doc)
    train = _join(merged)
    held_rng = random.Random(seed + 1_000_003)
    heldout = _join(generate(heldout_bytes,
                             lambda lang: make_heldout_document(world, lang, held_rng,
                                                                held_pairs)))

    probe_rng = random.Random(seed + 7)
    held_frames = range(COREF_TRAIN_FRAMES, len(COREF_FRAMES["en"]))
    probes = (_capital_probes(world, CAPITAL_TRAIN, "capital", probe_rng)
              + _capital_probes(world, CAPITAL_HELDOUT, "capital_heldout", probe_rng)
              + _coref_probes(world, probe_rng, held_pairs, held_frames, "coref", 64)
              + _coref_probes(world, probe_rng, held_pairs, range(COREF_TRAIN_FRAMES),
                              "coref_trained_frame", 32)
              + _relation_probes(world))
    return Corpus(seed, train, heldout, probes)


def build_model_tokenizer(corpus: Corpus | None = None,
                          num_merges: int = MODEL_TOKENIZER_MERGES) -> BPETokenizer:
    """The gpt-mode tokenizer our model uses: merges learned from the corpus' training text,
    and a base vocabulary of every corpus character plus all printable ASCII, common Chinese
    punctuation and the committed common-Han list (each a single token).

    Deterministic: same corpus, same tokenizer. Takes a few seconds.
    Example: build_model_tokenizer().tokens("法国的首都是") → ['法国', '的', '首都', '是']
    """
    corpus = corpus or build_corpus(0)
    return train_bpe(corpus.train_text, num_merges, mode="gpt", cjk_lexicon=cjk_lexicon(),
                     extra_chars=BASE_CHARS + han_characters()).tokenizer


def write_corpus(out: str | Path, seed: int = 0, tokenizer_dir: str | Path | None = None) -> Corpus:
    """Write train.txt, heldout.txt and probes.json (and optionally the tokenizer)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(seed)
    (out / "train.txt").write_text(corpus.train_text, encoding="utf-8", newline="")
    (out / "heldout.txt").write_text(corpus.heldout_text, encoding="utf-8", newline="")
    (out / "probes.json").write_text(
        json.dumps(corpus.probes, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    if tokenizer_dir is not None:
        build_model_tokenizer(corpus).save(tokenizer_dir)
    return corpus


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Generate Token Journey's bilingual corpus.")
    parser.add_argument("--out", default="assets/corpus", help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tokenizer", default=None,
                        help="also train the model tokenizer and save it to this folder")
    args = parser.parse_args(argv)
    corpus = write_corpus(args.out, args.seed, args.tokenizer)
    print(f"wrote {args.out}: train {len(corpus.train_text.encode()):,} bytes, heldout "
          f"{len(corpus.heldout_text.encode()):,} bytes, {len(corpus.probes)} probes")


if __name__ == "__main__":
    main()
