"""The bilingual (English + 中文) training corpus, generated from a small world, and the
tokenizer our model uses.

Design, for a ~1-3 M-parameter GPT (4 layers, d_model 128, context 128) to learn exactly what
the pages show:

* **Facts** - every country's capital in several phrasings per language; the main ones end
  exactly like the product's presets: ``"The capital of France is"`` → ``" Paris"``,
  ``"法国的首都是"`` → ``"巴黎"``. No other sentence continues those prefixes differently.
* **Categories** - each category's words appear in the same sentence frames ("The {x} is a
  sweet fruit." / "{x}是一种很甜的水果。"), so embeddings cluster by category.
* **Coreference** (the seeds' example) - "Tom put the apple in the bag because it was too sweet.
  It means the apple." / "小明把苹果放进书包，因为它太甜了。它指的是苹果。" A fruit trait (sweet,
  ripe) points back at the fruit, a container trait (small, full) at the container, so the
  answer needs attention to the right earlier noun. The held-out split uses fruit/container
  pairs that never occur together in training.
* **Stories** - short multi-sentence documents mixing everything with pronouns.

Documents are in one language each and every one is preceded by ``<|endoftext|>`` and ends
with a newline, so ``train.txt`` reads as one document per line. All randomness comes from
``random.Random(seed)``; the same seed gives byte-identical files.

CLI: ``python -m core.corpus --out assets/corpus`` writes train.txt, heldout.txt, probes.json
(and the model tokenizer to ``<out>/tokenizer`` with ``--tokenizer``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.tokenizer import ENDOFTEXT, BPETokenizer, train_bpe

WORLD_PATH = Path(__file__).resolve().parent.parent / "assets" / "world.json"
TARGET_TRAIN_BYTES = 1_500_000  # UTF-8 bytes of train.txt (the brief asks for 1-2 MB in all)
TARGET_HELDOUT_BYTES = 150_000
# More than the corpus can use: training stops once every pre-token of train.txt is a single
# token (about 1.2k merges, vocab about 1.8k), so every world word is one token.
MODEL_TOKENIZER_MERGES = 3000


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


def load_world(path: str | Path = WORLD_PATH) -> World:
    """Read ``assets/world.json`` (human-readable; edit it to change the corpus).

    Example: load_world().countries[0].capital.zh → '巴黎'
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    w = lambda d: Word(d["en"], d["zh"])  # noqa: E731
    world = World(
        countries=tuple(Country(w(c), w(c["capital"])) for c in data["countries"]),
        categories={
            key: Category(key, w(c["name"]), tuple(map(w, c["traits"])), tuple(map(w, c["words"])))
            for key, c in data["categories"].items()
        },
        people=tuple(Person(w(p), p["gender"]) for p in data["people"]),
        zh_function_words=tuple(data.get("zh_function_words", ())),
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
    for cat in world.categories.values():
        words |= {cat.name.zh, *(t.zh for t in cat.traits), *(x.zh for x in cat.words)}
    words |= {p.name.zh for p in world.people}
    return sorted(w for w in words if len(w) >= 2)


# --------------------------------------------------------------------------------------------
# Sentence makers
# --------------------------------------------------------------------------------------------


def _a(word: str) -> str:
    """English indefinite article. Example: _a("apple") → 'an apple'"""
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def capital_sentence(c: Country, lang: str, rng: random.Random, person: Person) -> str:
    """One fact about a capital; the first phrasing (the probe's) is the most common."""
    k = rng.choices(range(6), weights=(5, 2, 2, 1, 1, 1))[0]
    n, cap, who = c.name.get(lang), c.capital.get(lang), person.name.get(lang)
    if lang == "en":
        return [
            f"The capital of {n} is {cap}.",
            f"{cap} is the capital of {n}.",
            f"{n} is a country. Its capital is {cap}.",
            f"Q: What is the capital of {n}? A: {cap}.",
            f"{who} lives in {cap}, the capital of {n}.",
            f"{who} flew to {cap}, the capital of {n}.",
        ][k]
    return [
        f"{n}的首都是{cap}。",
        f"{cap}是{n}的首都。",
        f"{n}是一个国家，它的首都是{cap}。",
        f"问：{n}的首都在哪里？答：{cap}。",
        f"{who}住在{cap}，{cap}是{n}的首都。",
        f"{who}坐飞机去了{n}的首都{cap}。",
    ][k]


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


@dataclass(frozen=True)
class CorefItem:
    person: Person
    fruit: Word
    container: Word
    trait: Word
    refers_to_fruit: bool
    verb: int  # which sentence frame

    def referent(self) -> Word:
        return self.fruit if self.refers_to_fruit else self.container

    def distractor(self) -> Word:
        return self.container if self.refers_to_fruit else self.fruit

    def prompt(self, lang: str) -> str:
        """The text up to (not including) the referent."""
        who, f, c, t = (x.get(lang) for x in (self.person.name, self.fruit, self.container,
                                              self.trait))
        if lang == "en":
            first = [f"{who} put the {f} in the {c} because it was too {t}.",
                     f"{who} left the {f} in the {c} because it was too {t}."][self.verb]
            return first + " It means the"
        first = [f"{who}把{f}放进{c}，因为它太{t}了。",
                 f"{who}把{f}留在{c}里，因为它太{t}了。"][self.verb]
        return first + "它指的是"

    def text(self, lang: str) -> str:
        answer = self.referent().get(lang)
        return self.prompt(lang) + (f" {answer}." if lang == "en" else f"{answer}。")


def coref_item(world: World, rng: random.Random, pairs: list[tuple[int, int]]) -> CorefItem:
    fruits = world.categories["fruit"]
    boxes = world.categories["container"]
    fi, ci = rng.choice(pairs)
    to_fruit = rng.random() < 0.5
    trait = rng.choice(fruits.traits if to_fruit else boxes.traits)
    return CorefItem(rng.choice(world.people), fruits.words[fi], boxes.words[ci], trait,
                     to_fruit, rng.randrange(2))


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


def make_document(world: World, lang: str, rng: random.Random,
                  coref_pairs: list[tuple[int, int]]) -> str:
    """One document (one language): capital facts, category facts, coreference or a story."""
    kind = rng.choices(("capital", "category", "coref", "story"), weights=(3, 3, 3, 2))[0]
    n = rng.randint(2, 5)
    if kind == "capital":
        parts = [capital_sentence(rng.choice(world.countries), lang, rng,
                                  rng.choice(world.people)) for _ in range(n)]
    elif kind == "category":
        cat = rng.choice(list(world.categories.values()))
        parts = [category_sentence(cat, rng.choice(cat.words), lang, rng,
                                   rng.choice(world.people)) for _ in range(n)]
    elif kind == "coref":
        parts = [coref_item(world, rng, coref_pairs).text(lang) for _ in range(rng.randint(1, 3))]
    else:
        parts = [story(world, lang, rng, coref_pairs)]
    return _sep(lang).join(parts)


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
    hold; ``probes`` are dicts with kind ("capital"|"coref"), lang, prompt, answer (the next
    token's text, e.g. " Paris" or "巴黎") and, for coref, the distractor."""

    seed: int
    train_text: str
    heldout_text: str
    probes: list[dict[str, Any]] = field(default_factory=list)


def build_corpus(seed: int = 0, *, train_bytes: int = TARGET_TRAIN_BYTES,
                 heldout_bytes: int = TARGET_HELDOUT_BYTES) -> Corpus:
    """Generate the corpus deterministically from ``seed``.

    Example: build_corpus(0).probes[0] → {'kind': 'capital', 'lang': 'en',
             'prompt': 'The capital of France is', 'answer': ' Paris'}
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if train_bytes <= 0 or heldout_bytes <= 0:
        raise ValueError("train_bytes and heldout_bytes must be positive")
    world = _world()
    train_pairs, held_pairs = split_coref_pairs(world)
    rng = random.Random(seed)

    def generate(target: int, pairs: list[tuple[int, int]], maker: Callable[[str], str]) -> str:
        docs: list[str] = []
        size = 0
        while size < target:
            lang = "en" if len(docs) % 2 == 0 else "zh"
            doc = maker(lang)
            docs.append(doc)
            size += len(ENDOFTEXT) + len(doc.encode("utf-8")) + 1
        return _join(docs)

    train = generate(train_bytes, train_pairs,
                     lambda lang: make_document(world, lang, rng, train_pairs))
    held_rng = random.Random(seed + 1_000_003)
    heldout = generate(heldout_bytes, held_pairs,
                       lambda lang: _sep(lang).join(
                           coref_item(world, held_rng, held_pairs).text(lang)
                           for _ in range(held_rng.randint(1, 3))))

    probes: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        for c in world.countries:
            prompt = f"The capital of {c.name.en} is" if lang == "en" else f"{c.name.zh}的首都是"
            answer = f" {c.capital.en}" if lang == "en" else c.capital.zh
            probes.append({"kind": "capital", "lang": lang, "prompt": prompt, "answer": answer})
    probe_rng = random.Random(seed + 7)
    for lang in ("en", "zh"):
        for i in range(48):
            item = coref_item(world, probe_rng, held_pairs)
            if i % 2 == 0 and not item.refers_to_fruit or i % 2 == 1 and item.refers_to_fruit:
                # Balance: even probes point at the fruit, odd ones at the container.
                cat = world.categories["fruit" if i % 2 == 0 else "container"]
                item = CorefItem(item.person, item.fruit, item.container,
                                 probe_rng.choice(cat.traits), i % 2 == 0, item.verb)
            space = " " if lang == "en" else ""
            probes.append({
                "kind": "coref", "lang": lang, "prompt": item.prompt(lang),
                "answer": space + item.referent().get(lang),
                "distractor": space + item.distractor().get(lang),
            })
    return Corpus(seed, train, heldout, probes)


def build_model_tokenizer(corpus: Corpus | None = None,
                          num_merges: int = MODEL_TOKENIZER_MERGES) -> BPETokenizer:
    """The gpt-mode tokenizer our model uses, trained on the corpus' training text.

    Deterministic: same corpus, same tokenizer. Takes a few seconds.
    Example: build_model_tokenizer().tokens("法国的首都是") → ['法国', '的', '首都', '是']
    """
    corpus = corpus or build_corpus(0)
    return train_bpe(corpus.train_text, num_merges, mode="gpt",
                     cjk_lexicon=cjk_lexicon()).tokenizer


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
