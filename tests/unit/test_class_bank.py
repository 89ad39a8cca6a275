"""The multiple-choice bank (``serving.classroom.bank``): its checks, and every number in it.

Each numeric question's answer is recomputed here with the core function the app itself uses
(softmax, the parameter counter, the KV-cache calculator, BPE ...): the correct option must
show the recomputed number, in both languages, and no other option may show it. A question
whose numbers disagree with core fails.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.engine.sampling import sampling_steps, softmax
from core.lessons.attention_math import plain_normalise
from core.lessons.block import gradient_paths, layer_norm, rms_norm
from core.lessons.kv_memory import format_bytes, kv_cache_memory
from core.lessons.param_count import PRESETS, count_parameters
from core.lessons.positional import sinusoidal_vector
from core.lessons.vectors import cosine_similarity, euclidean_distance
from core.text.bpe import learn_merges
from core.training.replay import cross_entropy, uniform_loss
from serving.classroom import bank as bank_module
from serving.classroom.bank import BANK_DIR, LANGUAGES, STATIONS, BankError, bank, check_banks, choice_spec, load_banks
from serving.classroom.rules import check_question
from ui import nav


def _raw() -> dict[str, Any]:
    return {lang: json.loads((BANK_DIR / f"bank.{lang}.json").read_text(encoding="utf-8")) for lang in LANGUAGES}


# --- the checks -------------------------------------------------------------------------------


def test_the_shipped_bank_loads_with_30_questions_per_language_and_the_same_ids() -> None:
    banks = {lang: bank(lang) for lang in LANGUAGES}
    for lang, b in banks.items():
        assert len(b.questions) >= 30, lang
        assert len(set(b.ids())) == len(b.ids())
    assert banks["en"].ids() == banks["zh"].ids()
    for station in STATIONS:
        assert banks["en"].for_station(station), station


def test_stations_are_the_navigation_pages_without_the_overview() -> None:
    pages = [p.page_id for _, section in nav.SECTIONS for p in section if p.page_id != "overview"]
    assert sorted(pages) == sorted(STATIONS)


def test_every_bank_question_is_a_valid_class_question() -> None:
    for qid in bank("en").ids():
        spec = choice_spec(qid)
        assert check_question("choice", spec) == spec


def test_no_student_reads_the_words_seed_or_curriculum() -> None:
    for lang in LANGUAGES:
        for q in bank(lang).questions:
            text = " ".join((q.text, q.explanation, *q.options)).lower()
            for word in ("seed", "curriculum", "种子", "课程大纲"):
                assert word not in text, (lang, q.qid, word)


def test_chinese_questions_are_written_in_chinese() -> None:
    for q in bank("zh").questions:
        assert any("\u4e00" <= ch <= "\u9fff" for ch in q.text), q.qid
        assert any("\u4e00" <= ch <= "\u9fff" for ch in q.explanation), q.qid


def test_loading_is_lazy_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    bank_module._checked_banks.cache_clear()
    calls: list[Path] = []
    real = bank_module.load_banks
    monkeypatch.setattr(bank_module, "load_banks", lambda d: calls.append(d) or real(d))
    bank("en"), bank("zh"), bank("en")
    assert calls == [BANK_DIR]
    bank_module._checked_banks.cache_clear()


def _broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    raw = copy.deepcopy(_raw())
    change(raw)
    return raw


def _first(raw: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    return raw[lang]["questions"][0]


BROKEN: dict[str, Callable[[dict[str, Any]], None]] = {
    "duplicate id": lambda r: [r[lang]["questions"].append(copy.deepcopy(r[lang]["questions"][0])) for lang in LANGUAGES],
    "ids differ": lambda r: _first(r, "zh").update(id="tok.renamed"),
    "order differs": lambda r: r["zh"]["questions"].reverse(),
    "one option": lambda r: [_first(r, lang).update(options=["only"], correct=0) for lang in LANGUAGES],
    "seven options": lambda r: [_first(r, lang).update(options=[f"o{i}" for i in range(7)]) for lang in LANGUAGES],
    "correct out of range": lambda r: [_first(r, lang).update(correct=4) for lang in LANGUAGES],
    "correct negative": lambda r: [_first(r, lang).update(correct=-1) for lang in LANGUAGES],
    "correct not an int": lambda r: [_first(r, lang).update(correct="1") for lang in LANGUAGES],
    "correct differs": lambda r: _first(r, "zh").update(correct=0),
    "station differs": lambda r: _first(r, "zh").update(station="embeddings"),
    "unknown station": lambda r: [_first(r, lang).update(station="nowhere") for lang in LANGUAGES],
    "option count differs": lambda r: _first(r, "zh")["options"].append("多一个"),
    "bad id": lambda r: [_first(r, lang).update(id="Bad Id!") for lang in LANGUAGES],
    "empty text": lambda r: _first(r).update(text=" "),
    "same option twice": lambda r: _first(r).update(options=["a", "a", "b", "c"]),
    "unknown field": lambda r: _first(r).update(answer=1),
    "no explanation": lambda r: _first(r).pop("explanation"),
    "station left uncovered": lambda r: [r[lang].update(questions=[q for q in r[lang]["questions"]
                                                                   if q["station"] != "training"]) for lang in LANGUAGES],
    "wrong language tag": lambda r: r["zh"].update(language="en"),
    "not a list": lambda r: r["en"].update(questions={}),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_bank_is_refused(name: str) -> None:
    check_banks(_raw())  # the shipped one passes
    with pytest.raises(BankError):
        check_banks(_broken(BROKEN[name]))


def test_a_broken_file_is_refused(tmp_path: Path) -> None:
    for lang in LANGUAGES:
        (tmp_path / f"bank.{lang}.json").write_text(json.dumps(_raw()[lang], ensure_ascii=False), encoding="utf-8")
    assert load_banks(tmp_path)["zh"].ids() == bank("zh").ids()
    (tmp_path / "bank.zh.json").write_text('{"language": "zh", "questions": [', encoding="utf-8")
    with pytest.raises(BankError, match="bank.zh.json"):
        load_banks(tmp_path)
    (tmp_path / "bank.zh.json").unlink()
    with pytest.raises(BankError, match="bank.zh.json"):
        load_banks(tmp_path)


# --- every number, recomputed with core -----------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """``option`` (None: the explanation) shows ``en`` / ``zh``, both computed from core."""

    option: int | None
    en: str
    zh: str


def same(text: str, option: int | None = None) -> Claim:
    return Claim(option, text, text)


def vec(values: Any, digits: int | None = None) -> str:
    """[a, b, c] as the bank writes vectors: fixed digits, an exact 0 as "0"."""
    return "[" + ", ".join("0" if v == 0 else (f"{v:g}" if digits is None else f"{v:.{digits}f}")
                           for v in np.asarray(values, dtype=float)) + "]"


def minus(text: str) -> str:
    return text.replace("-", "−")  # the bank prints a real minus sign


GPT2 = PRESETS["gpt2-small"].spec


def _first_merge() -> list[Claim]:
    words = [(list("low") + ["</w>"], 5), (list("lower") + ["</w>"], 2),
             (list("newest") + ["</w>"], 3), (list("widest") + ["</w>"], 3)]
    merge = learn_merges(words, 2).merges[0]
    counts = dict(merge.top_pairs)
    assert ("o", "w") in merge.ties  # the tie the answer mentions
    lo = "".join(merge.pair)
    return [Claim(1, f"{' + '.join(merge.pair)} → {lo} ({merge.count} times", f"{' + '.join(merge.pair)} → {lo}（{merge.count} 次"),
            Claim(0, f"({counts[('e', 's')]} times)", f"（出现 {counts[('e', 's')]} 次）"),
            Claim(2, f"({counts[('w', '</w>')]} times)", f"（{counts[('w', '</w>')]} 次）"),
            Claim(3, f"({counts[('n', 'e')]} times)", f"（{counts[('n', 'e')]} 次）")]


def _cosine() -> list[Claim]:
    apple, banana, plane = [0.8, 0.2, 0.1], [0.7, 0.3, 0.1], [0.1, 0.8, 0.8]
    return [same(f"{cosine_similarity(apple, banana):.2f}", 2), same(f"{float(np.dot(apple, banana)):.2f}", 0),
            same(f"{euclidean_distance(apple, banana):.2f}", 1), same(f"{cosine_similarity(apple, plane):.2f}", 3)]


def _gpt2_table() -> list[Claim]:
    n = count_parameters(GPT2).components["token_embedding"]
    return [Claim(0, f"About {n / 1e6:.1f} million", f"约 {n / 1e4:,.0f} 万"), same(f"{n:,}")]


def _sin_pos3() -> list[Claim]:
    v = sinusoidal_vector(3, 8)
    return [same(f"{v[0]:.3f}", 3), same(minus(f"{v[1]:.3f}"), 0), same(f"{v[2]:.3f}", 1)]


def _ln_numbers() -> list[Claim]:
    ln, rms = layer_norm([0.2, 8.5, -3.1, 1.4]), rms_norm([0.2, 8.5, -3.1, 1.4])
    return [Claim(2, f"mean {ln.mean:.2f}, std ≈ {ln.scale:.2f}", f"均值 {ln.mean:.2f}，标准差 ≈ {ln.scale:.2f}"),
            Claim(1, f"std ≈ {rms.scale:.2f}", f"标准差 ≈ {rms.scale:.2f}"),
            same(minus(vec(ln.normalized, 2)))]


def _residual() -> list[Claim]:
    left = gradient_paths(48)["0.9"][-1]
    return [Claim(1, f"About {100 * left:.1f} %", f"约 {100 * left:.1f}%"), same(f"{left:.4f}")]


def _gpt2_params() -> list[Claim]:
    count = count_parameters(GPT2)
    blocks = GPT2.n_layer * sum(count.per_layer.values())
    xl = count_parameters(PRESETS["gpt2-xl"].spec).total
    return [Claim(3, f"About {count.total / 1e6:.0f} million", f"约 {count.total / 1e8:.2f} 亿"),
            Claim(0, f"About {blocks / 1e6:.0f} million", f"约 {round(blocks / 1e6) * 100:,} 万"),
            Claim(1, f"About {xl / 1e9:.1f} billion", f"约 {xl / 1e8:.0f} 亿")]


def _ffn_share() -> list[Claim]:
    layer = count_parameters(GPT2).per_layer
    share = Fraction(layer["ffn"] / (layer["attention"] + layer["ffn"] + layer["norms"])).limit_denominator(3)
    return [Claim(0, f"The FFN: about {share}", f"FFN：约 {share}"),
            Claim(None, f"{layer['attention'] / 1e6:.2f} M", f"{layer['attention'] / 1e4:.0f} 万"),
            Claim(None, f"{layer['ffn'] / 1e6:.2f} M", f"{layer['ffn'] / 1e4:.0f} 万")]


def _kv_bytes() -> list[Claim]:
    scout = kv_cache_memory(48, 8, 128, 10_000, dtype="fp16")
    no_sharing = kv_cache_memory(48, 40, 128, 10_000, dtype="fp16")
    return [same(f"{scout.total_bytes / 1e9:.2f} GB", 2), same(format_bytes(scout.bytes_per_layer), 0),
            same(f"{scout.total_bytes / 2 / 1e9:.2f} GB", 1), same(f"{no_sharing.total_bytes / 1e9:.2f} GB", 3)]


def _gqa() -> list[Claim]:
    ratio = kv_cache_memory(48, 40, 128, 10_000).total_bytes / kv_cache_memory(48, 8, 128, 10_000).total_bytes
    assert ratio == int(ratio)
    return [Claim(3, f"{int(ratio)}× smaller", f"小 {int(ratio)} 倍"), Claim(None, f"40 / 8 = {int(ratio)}", f"40 / 8 = {int(ratio)}")]


NUMERIC: dict[str, Callable[[], list[Claim]]] = {
    "tok.first_merge": _first_merge,
    "tok.gpt2_vocab": lambda: [same(f"{GPT2.vocab:,}", 2), same(f"{GPT2.n_ctx:,}", 3)],
    "emb.cosine": _cosine,
    "emb.length": lambda: [same(f"{round(cosine_similarity([1, 1], [100, 100]), 9):g}", 1)],
    "emb.gpt2_table": _gpt2_table,
    "pe.sin_pos3": _sin_pos3,
    "pe.pos0": lambda: [same(vec(sinusoidal_vector(0, 8)), 0)],
    "sa.softmax_233": lambda: [same(vec(softmax(np.array([2.0, 3.0, 3.0])), 3), 1),
                               same(vec(plain_normalise([2, 3, 3]).weights), 0)],
    "sa.negative_scores": lambda: [same(vec(softmax(np.array([1.0, -2.0, 1.0])), 3), 1)],
    "sa.dk_64": lambda: [same(f"{math.sqrt(64):g}", 1)],
    "sa.causal_row": lambda: [same(vec(softmax(np.array([2.0, 4.0, -np.inf])), 2), 0)],
    "mha.head_width": lambda: [same(str(GPT2.d_head), 2), same(f"{GPT2.d_model} / {GPT2.n_head} = {GPT2.d_head}")],
    "tb.ln_numbers": _ln_numbers,
    "tb.residual_gradient": _residual,
    "wm.gpt2_params": _gpt2_params,
    "wm.ffn_share": _ffn_share,
    "wm.gpt2_layers": lambda: [same(str(GPT2.n_layer), 1), same(str(PRESETS["gpt2-xl"].spec.n_layer), 2),
                               same(str(PRESETS["gpt3-175b"].spec.n_layer), 3)],
    "ls.top_p": lambda: [same(str(sampling_steps(np.log([0.5, 0.3, 0.15, 0.05]), top_p=0.9).n_candidates), 2)],
    "gen.kv_bytes": _kv_bytes,
    "gen.gqa": _gqa,
    "tr.cross_entropy": lambda: [same(f"{cross_entropy(0.9):.3f}", 0), same(f"{cross_entropy(0.1):.1f}", 3)],
    "tr.uniform_loss": lambda: [same(f"{uniform_loss(GPT2.vocab):.1f}", 1)],
}


def test_every_numeric_question_is_recomputed_here() -> None:
    flagged = {q.qid for q in bank("en").questions if q.numeric}
    assert flagged == set(NUMERIC), (flagged ^ set(NUMERIC))


@pytest.mark.parametrize("qid", sorted(NUMERIC))
@pytest.mark.parametrize("lang", LANGUAGES)
def test_numeric_answers_agree_with_core(qid: str, lang: str) -> None:
    question = bank(lang).question(qid)
    claims = NUMERIC[qid]()
    answer = claims[0]
    assert answer.option == question.correct, f"{qid}: the recomputed answer is not the correct option"
    for claim in claims:
        text = getattr(claim, lang)
        if claim.option is None:
            assert text in question.explanation, (qid, lang, text, question.explanation)
            continue
        assert text in question.options[claim.option], (qid, lang, claim.option, text, question.options)
        if claim is answer:
            others = [o for i, o in enumerate(question.options) if i != claim.option]
            whole = text == question.options[claim.option]  # a bare number: compared whole ("1" vs "100")
            assert not any(text == o if whole else text in o for o in others), (qid, lang, "shows in another option")


# Markdown that would change how a text reads (emphasis, code, links, images, KaTeX, HTML,
# Streamlit's :directives[...], a line read as a list or heading). The card and the class
# screens show bank text as written, and a widget's label is also its accessible name, so the
# text must carry no syntax (and no escapes a screen reader would read aloud).
MARKDOWN_SYNTAX = re.compile(
    r"[*`$<#|~\\]|\]\(|!\[|:[A-Za-z_]+[\[:]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|^\s*([-+>]|\d+[.)])\s"
)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_bank_text_has_no_markdown_syntax(lang: str) -> None:
    for q in bank(lang).questions:
        for text in (q.text, q.explanation):
            assert not MARKDOWN_SYNTAX.search(text), (lang, q.qid, MARKDOWN_SYNTAX.search(text))
