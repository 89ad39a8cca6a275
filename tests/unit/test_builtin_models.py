"""The committed checkpoints: they load, and they learned what the pages rely on.

Bars (issue [W2-H], recomputed here on assets/corpus/probes.json, not read from metrics.json):
capitals top-1 100 % on the trained template families and >= 95 % on the held-out families,
each language; coreference >= 90 % on held-out noun pairs in held-out sentence frames, each
language; the strongest coreference head >= 3x more attention on the right noun than on the
wrong one; 5-NN category purity of the embedding table >= 0.9; the capital of France top-1
with p >= 0.5 and the teachers' rephrasings right. Plus checkpoint I/O and a training smoke test.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import core
from core.engine import device as devices
from core.engine.checkpoint import (
    ASSETS_MODELS,
    CheckpointCorruptError,
    CheckpointMissingError,
    LoadedModel,
    load_checkpoint,
    save_checkpoint,
)
from core.text.corpus import category_words
from core.engine.model import GPTConfig, build_model
from core.lessons.probes import (
    coref_head_attention,
    coref_head_report,
    embedding_purity,
    evaluate_probe,
    evaluate_probes,
    NATURAL_PHRASINGS,
    ProbeResult,
    knn_purity,
    probe_accuracy,
    strongest_coref_head,
)
from core.training.train import PRESETS, TrainSettings, evaluate_loss, learning_rate, preset_config, train_model

torch.set_num_threads(1)

PROBES_FILE = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "probes.json"
HELDOUT_FILE = PROBES_FILE.with_name("heldout.txt")


@pytest.fixture(scope="module", params=sorted(PRESETS))
def loaded(request: pytest.FixtureRequest) -> LoadedModel:
    return core.load_builtin(request.param)


@pytest.fixture(scope="module")
def probes() -> list[dict]:
    return json.loads(PROBES_FILE.read_text(encoding="utf-8"))


# --- loading ----------------------------------------------------------------------------------


def test_builtin_loads_ready_to_use(loaded: LoadedModel) -> None:
    assert loaded.name in PRESETS
    assert not loaded.model.training
    assert loaded.config == preset_config(loaded.name, loaded.tokenizer.vocab_size)
    assert loaded.model.config == loaded.config
    assert 1_000_000 <= loaded.model.num_params() <= 3_000_000
    assert loaded.device == devices.pick()
    for key in ("params", "steps", "train_seconds", "train_loss", "heldout_loss", "heldout_perplexity", "probe_accuracy"):
        assert key in loaded.metrics, key
    assert loaded.metrics["params"] == loaded.model.num_params()


def test_models_were_trained_on_the_committed_corpus(loaded: LoadedModel) -> None:
    from core.training.train import corpus_fingerprint

    assert loaded.metrics["corpus_sha256"] == corpus_fingerprint(), (
        f"assets/corpus changed since {loaded.name} was trained; retrain: python -m core.training.train --preset {loaded.name}"
    )


def test_the_two_presets_differ_in_design() -> None:
    classic, modern = core.load_builtin("classic").config, core.load_builtin("modern").config
    assert (classic.positional, classic.norm, classic.mlp) == ("sinusoidal", "layernorm", "gelu")
    assert (modern.positional, modern.norm, modern.mlp) == ("rope", "rmsnorm", "swiglu")


# --- what the models learned (issue [W2-H] acceptance, recomputed on the committed probes) -----------

# Bars the shipped checkpoints still miss, by model (both retrained 2026-12-03 on the corpus whose
# English capital sentences that begin with a country also begin documents; 4,000 steps).
# The check still runs: a listed bar that is met fails the test, so the entry must then be removed.
SHORT_OF_THE_BAR: dict[tuple[str, str], str] = {}  # every bar is met by both shipped models


def _check(loaded: LoadedModel, bar: str, ok: bool, detail: object) -> None:
    reason = SHORT_OF_THE_BAR.get((loaded.name, bar))
    if reason is None:
        assert ok, detail
    elif ok:
        pytest.fail(f"{loaded.name} now meets the {bar} bar: remove it from SHORT_OF_THE_BAR")
    else:
        pytest.xfail(f"{loaded.name} is short of the {bar} bar: {reason} ({detail})")


@pytest.fixture(scope="module")
def probe_results(loaded: LoadedModel, probes: list[dict]) -> list[ProbeResult]:
    return [evaluate_probe(loaded.model, loaded.tokenizer, p) for p in probes]


@pytest.fixture(scope="module")
def scored(probe_results: list[ProbeResult]) -> dict[str, dict[str, float]]:
    return probe_accuracy(probe_results)


def test_batched_probe_evaluation_agrees_with_one_prompt_at_a_time(loaded: LoadedModel, probes: list[dict],
                                                                   probe_results: list[ProbeResult]) -> None:
    """Training's history rows use the batched evaluator; it must give the same answers."""
    batched = evaluate_probes(loaded.model, loaded.tokenizer, probes, batch_size=97)  # odd size: several chunks per length
    assert [r.prompt for r in batched] == [p["prompt"] for p in probes]
    for single, many in zip(probe_results, batched):
        assert (many.predicted, many.answer_rank, many.correct) == (single.predicted, single.answer_rank, single.correct), single.prompt
        assert many.answer_prob == pytest.approx(single.answer_prob, abs=1e-5)


@pytest.mark.parametrize(("prompt", "answer"), [("法国的首都是", "巴黎"), ("The capital of France is", " Paris")])
def test_capital_of_france_in_both_languages(loaded: LoadedModel, prompt: str, answer: str) -> None:
    result = evaluate_probe(loaded.model, loaded.tokenizer, {"kind": "capital", "lang": "?", "prompt": prompt, "answer": answer})
    assert result.correct, f"{loaded.name}: top-1 after {prompt!r} is {result.predicted!r}"
    assert result.answer_prob >= 0.5


@pytest.mark.parametrize("probe", NATURAL_PHRASINGS, ids=lambda p: p["prompt"])
def test_natural_phrasings_a_teacher_types(loaded: LoadedModel, probe: dict) -> None:
    result = evaluate_probe(loaded.model, loaded.tokenizer, probe)
    assert result.correct, f"{loaded.name}: top-1 after {probe['prompt']!r} is {result.predicted!r}"


def test_capitals_on_trained_templates_all_right(loaded: LoadedModel, scored: dict) -> None:
    row = scored["capital"]
    assert row["n"] >= 800
    _check(loaded, "trained_templates", row["en"] == 1.0 and row["zh"] == 1.0, row)


def test_capitals_on_heldout_template_families_at_least_95_percent(loaded: LoadedModel, scored: dict) -> None:
    row = scored["capital_heldout"]
    assert row["n"] >= 400
    _check(loaded, "heldout_templates", row["en"] >= 0.95 and row["zh"] >= 0.95, row)


def test_heldout_coreference_at_least_90_percent(loaded: LoadedModel, scored: dict) -> None:
    """Fruit/container pairs never seen together, in sentence frames never seen in training."""
    row = scored["coref"]
    assert row["n"] >= 100
    _check(loaded, "heldout_coref", row["en"] >= 0.9 and row["zh"] >= 0.9, row)


def test_metrics_acceptance_matches_the_recomputed_figures(loaded: LoadedModel, scored: dict) -> None:
    figures = loaded.metrics["acceptance"]
    for key, (kind, lang) in {"capital_trained_en": ("capital", "en"), "capital_heldout_template_zh": ("capital_heldout", "zh"),
                              "coref_heldout_en": ("coref", "en"), "coref_heldout_zh": ("coref", "zh")}.items():
        assert figures[key] == pytest.approx(scored[kind][lang], abs=1e-4), key
    assert figures["natural_phrasings_correct"] is True
    assert figures["byte_fallback_share"] <= 0.01
    assert loaded.metrics["probe_accuracy"]["capital_heldout"]["n"] == scored["capital_heldout"]["n"]


def test_coreference_heads_are_reported(loaded: LoadedModel, probes: list[dict]) -> None:
    report = coref_head_report(loaded.model, loaded.tokenizer, probes, top=3)
    n_layer, n_head = loaded.config.n_layer, loaded.config.n_head
    assert np.asarray(report["referent"]).shape == (n_layer, n_head)
    best = report["top_heads"][0]
    assert best["margin"] == max(h["margin"] for h in report["top_heads"])
    # The strongest coreference head reads the right noun at least 3x as much as the wrong one.
    strongest = strongest_coref_head(report)
    assert loaded.metrics["coref_heads"]["top_heads"][0]["layer"] == best["layer"]
    assert loaded.metrics["acceptance"]["coref_head_ratio"] == pytest.approx(strongest["ratio"], rel=1e-3)
    _check(loaded, "coref_head", strongest["ratio"] >= 3.0, report["top_heads"])


def test_coref_head_attention_on_the_seed_example(loaded: LoadedModel) -> None:
    found = coref_head_attention(loaded.model, loaded.tokenizer, "小明把苹果放进书包，因为它太甜了。它指的是", ["苹果", "书包"])
    assert found.weights.shape == (loaded.config.n_layer, loaded.config.n_head, 2)
    assert ((found.weights >= 0) & (found.weights <= 1 + 1e-6)).all()
    assert [found.tokens[i] for i in found.candidate_positions[0]] == ["苹果"]


def test_embedding_categories_cluster(loaded: LoadedModel) -> None:
    report = embedding_purity(loaded.model, loaded.tokenizer, category_words(), k=5)
    assert report["n_words"] >= 100 and report["n_categories"] >= 8
    assert report["purity_full"] >= 0.9, report
    assert 0.0 <= report["purity_pca3"] <= 1.0
    assert report == loaded.metrics["embedding"]


def test_heldout_perplexity_matches_metrics(loaded: LoadedModel) -> None:
    ids = loaded.tokenizer.encode(HELDOUT_FILE.read_text(encoding="utf-8"))
    loss = evaluate_loss(loaded.model, ids)
    assert math.exp(loss) == pytest.approx(loaded.metrics["heldout_perplexity"], rel=1e-3)
    assert loaded.metrics["heldout_perplexity"] < 10  # far below uniform guessing (vocab ~5.9k)


def test_knn_purity_by_hand() -> None:
    points = np.array([[1.0, 0.0], [1.0, 0.2], [0.0, 1.0], [0.2, 1.0], [1.0, 0.1]])
    # Angles: p0 0°, p1 11.3°, p4 5.7° (labelled b), p2 90°, p3 78.7°. Nearest neighbours:
    # p0 -> p4 (wrong), p1 -> p4 (wrong), p4 -> p1 (wrong), p2 <-> p3 (right): 2 of 5.
    assert knn_purity(points, ["a", "a", "b", "b", "b"], k=1) == pytest.approx(2 / 5)
    assert knn_purity(points, ["a", "a", "b", "b", "a"], k=1) == 1.0
    with pytest.raises(ValueError):
        knn_purity(points, ["a"], k=1)


# --- checkpoint errors and round trip -----------------------------------------------------------


def test_unknown_builtin_name() -> None:
    with pytest.raises(ValueError, match="unknown built-in model 'gpt5'"):
        core.load_builtin("gpt5")


def test_missing_and_corrupt_checkpoints_name_the_file_and_the_fix(tmp_path: Path) -> None:
    folder = tmp_path / "classic"
    shutil.copytree(ASSETS_MODELS / "classic", folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(b"\x00garbage" * 10)
    with pytest.raises(CheckpointCorruptError, match="model.safetensors.*python -m core.training.train --preset classic"):
        load_checkpoint(folder)
    weights.unlink()
    with pytest.raises(CheckpointMissingError, match="missing .*model.safetensors.*python -m core.training.train --preset classic"):
        load_checkpoint(folder)
    with pytest.raises(FileNotFoundError):  # the pages catch FileNotFoundError
        load_checkpoint(folder)
    (folder / "config.json").write_text("{not json")
    with pytest.raises(CheckpointCorruptError, match="config.json"):
        load_checkpoint(folder)
    with pytest.raises(CheckpointMissingError, match="config.json"):
        load_checkpoint(tmp_path / "nothing-here", preset="modern")


def test_save_and_load_round_trip_stores_tied_weights_once(tmp_path: Path) -> None:
    from safetensors import safe_open

    tokenizer = core.load_builtin("classic").tokenizer
    config = GPTConfig.tiny(vocab_size=tokenizer.vocab_size, positional="rope", norm="rmsnorm", mlp="swiglu")
    model = build_model(config, seed=3).eval()
    save_checkpoint(model, tmp_path, tokenizer, {"note": "tiny"}, preset=None)
    with safe_open(str(tmp_path / "model.safetensors"), "pt") as handle:
        assert "lm_head.weight" not in handle.keys() and "wte.weight" in handle.keys()
    again = load_checkpoint(tmp_path)
    assert again.config == config and again.metrics == {"note": "tiny"}
    assert again.model.lm_head.weight is again.model.wte.weight
    ids = tokenizer.encode("法国的首都是")
    np.testing.assert_array_equal(again.model.logits(ids), model.logits(ids))
    # A config that does not match the weights is refused, naming both files.
    data = json.loads((tmp_path / "config.json").read_text())
    data["config"]["d_mlp"] = 32
    (tmp_path / "config.json").write_text(json.dumps(data))
    with pytest.raises(CheckpointCorruptError, match="shape"):
        load_checkpoint(tmp_path)


# --- training ----------------------------------------------------------------------------------


def test_learning_rate_schedule() -> None:
    settings = TrainSettings(steps=100, warmup_steps=10, lr=1e-3, min_lr_ratio=0.1)
    assert learning_rate(0, settings) == pytest.approx(1e-4)
    assert learning_rate(9, settings) == pytest.approx(1e-3)
    assert learning_rate(99, settings) == pytest.approx(1e-4)
    assert learning_rate(54, settings) < learning_rate(30, settings)


def test_training_lowers_the_loss_and_is_deterministic() -> None:
    # A repeating 12-token pattern: a tiny model can learn it in a few dozen steps.
    pattern = [3, 7, 1, 9, 4, 4, 2, 8, 5, 0, 6, 11]
    stream = pattern * 40
    config = GPTConfig.tiny(vocab_size=12, n_ctx=16)
    settings = TrainSettings(steps=40, batch_size=8, lr=1e-2, warmup_steps=5, eval_interval=20, seed=1)
    calls: list[tuple[int, int, float]] = []
    first = train_model(config, stream, stream[:100], settings, device="cpu", progress=False,
                        on_step=lambda step, total, loss: calls.append((step, total, loss)))
    assert [c[:2] for c in calls] == [(s, 40) for s in range(1, 41)]
    assert calls[-1][2] < 0.5 * calls[0][2]
    assert [row["step"] for row in first.history] == [20, 40]
    assert first.history[-1]["heldout_loss"] < first.history[0]["heldout_loss"]
    second = train_model(config, stream, stream[:100], settings, device="cpu", progress=False)
    for a, b in zip(first.model.parameters(), second.model.parameters()):
        assert torch.equal(a, b)


def test_training_refuses_bad_input() -> None:
    config = GPTConfig.tiny(vocab_size=12, n_ctx=16)
    with pytest.raises(ValueError, match="need more than n_ctx"):
        train_model(config, [1, 2, 3], [1, 2], TrainSettings(steps=1), device="cpu", progress=False)
    with pytest.raises(ValueError, match="outside the model's vocabulary"):
        train_model(config, [99] * 40, [1, 2], TrainSettings(steps=1), device="cpu", progress=False)
    with pytest.raises(ValueError, match="steps must be a positive int"):
        TrainSettings(steps=0)
    with pytest.raises(ValueError, match="unknown preset"):
        preset_config("huge", 100)
