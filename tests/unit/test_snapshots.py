"""Training snapshots (core.training.snapshots) and the training loop's hooks (progress, stop, snapshots).

The writing path is tested on tiny runs into temporary folders; the shipped snapshot sets of
the built-in models are checked against their model.safetensors.
"""

from __future__ import annotations

import json
import math
import shutil
import threading
from pathlib import Path

import pytest
import torch

import core
from core.engine.checkpoint import ASSETS_MODELS, load_checkpoint
from core.engine.model import GPTConfig, build_model
from core.training.snapshots import (
    INDEX_FILE,
    SNAPSHOT_DIR,
    SnapshotError,
    SnapshotWriter,
    dequantize_state,
    fit_to_budget,
    load_snapshot,
    parse_snapshot_name,
    quantize_state,
    read_index,
    snapshot_file_bytes,
    snapshot_model,
    snapshot_name,
    snapshot_schedule,
    weights_sha256,
)
from core.training.train import Progress, TrainSettings, evaluate_loss, shape_config, train_model, train_preset

torch.set_num_threads(1)

CORPUS = Path(__file__).resolve().parents[2] / "assets" / "corpus"


@pytest.fixture(scope="module")
def stream() -> list[int]:
    g = torch.Generator().manual_seed(3)
    # a learnable stream: a repeating 7-token pattern with some noise
    base = [(i % 7) + 1 for i in range(3000)]
    noise = torch.randint(0, 40, (3000,), generator=g).tolist()
    return [b if n > 4 else n for b, n in zip(base, noise)]


CONFIG = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=40)
SETTINGS = TrainSettings(steps=24, batch_size=4, lr=1e-2, warmup_steps=3, eval_interval=12, seed=5)


def _run(folder: Path, stream: list[int], steps: tuple[int, ...]) -> tuple[SnapshotWriter, object]:
    writer = SnapshotWriter(folder / SNAPSHOT_DIR, "fixture", CONFIG, SETTINGS.seed, SETTINGS.steps, steps)
    result = train_model(CONFIG, stream[:2500], stream[2500:], SETTINGS, device="cpu", progress=False,
                         snapshot_steps=steps, on_snapshot=writer)
    writer.finish(result.train_losses, result.history)
    return writer, result


# --- schedule and budget ---------------------------------------------------------------------------


def test_schedule_is_log_spaced_from_zero_to_the_end() -> None:
    steps = snapshot_schedule(2000, 12)
    assert steps[0] == 0 and steps[-1] == 2000 and len(steps) == 13
    assert list(steps) == sorted(set(steps))
    ratios = [b / a for a, b in zip(steps[1:], steps[2:])]
    assert max(ratios) / min(ratios) < 1.1  # geometric spacing (up to rounding)
    assert snapshot_schedule(5, 12) == (0, 1, 2, 3, 4, 5)  # short runs: every step, no duplicates
    assert snapshot_schedule(100, 0) == (0,)


def test_budget_reduces_the_number_of_snapshots() -> None:
    config = shape_config("builtin", "classic", 6000)
    per_file = snapshot_file_bytes(config)
    assert per_file == pytest.approx(sum(p.numel() for p in build_model(config, device="cpu").parameters()), rel=0.03)  # + scales, fp16 vectors
    steps = fit_to_budget(2000, 12, config, 15 * 2**20)
    intermediate = [s for s in steps if 0 < s < 2000]
    assert len(intermediate) * per_file <= 15 * 2**20
    assert len(fit_to_budget(2000, 12, config, 10**12)) == 13  # enough room: all of them
    assert fit_to_budget(2000, 12, config, 0) == (0, 2000)


# --- quantisation ----------------------------------------------------------------------------------


def test_int8_round_trip_error_is_at_most_half_a_step() -> None:
    model = build_model(CONFIG, seed=1, device="cpu")
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    stored = quantize_state(state)
    back = dequantize_state(stored)
    assert set(back) == set(state)
    for name, tensor in state.items():
        if tensor.dim() >= 2:
            assert stored[name].dtype == torch.int8
            scale = stored[name + ".__scale"].float()[:, None]
            err = (back[name] - tensor).abs().reshape(tensor.shape[0], -1)
            assert bool((err <= scale * 0.5 + 1e-7).all()), name
        else:
            assert stored[name].dtype == torch.float16
            assert torch.allclose(back[name], tensor, rtol=1e-3, atol=1e-4)


def test_all_zero_rows_survive() -> None:
    back = dequantize_state(quantize_state({"w": torch.zeros(3, 4)}))
    assert torch.equal(back["w"], torch.zeros(3, 4))


# --- writing, reading, reproducing -----------------------------------------------------------------


def test_snapshot_round_trip_and_losses(tmp_path: Path, stream: list[int]) -> None:
    steps = snapshot_schedule(SETTINGS.steps, 5)
    writer, result = _run(tmp_path, stream, steps)
    index = read_index(tmp_path)
    assert index.steps == steps
    assert [e.kind for e in index.entries] == ["init"] + ["int8"] * (len(steps) - 2) + ["final"]
    assert len(index.train_log) == SETTINGS.steps
    assert index.entries[-1].tokens_seen == SETTINGS.steps * SETTINGS.batch_size * CONFIG.n_ctx
    held = stream[2500:]
    for entry in index.entries:
        model = snapshot_model(index, entry.step, final_model=result.model)
        loss = evaluate_loss(model, held)
        assert loss == pytest.approx(entry.heldout_loss, rel=0.02), entry.step  # int8 changes little
    # files on disk are what the index names, nothing else
    files = sorted(p.name for p in (tmp_path / SNAPSHOT_DIR).iterdir())
    assert files == sorted([INDEX_FILE] + [e.file for e in index.entries if e.file])


def test_step_zero_is_regenerated_from_the_seed(tmp_path: Path, stream: list[int]) -> None:
    _run(tmp_path, stream, (0, SETTINGS.steps))
    index = read_index(tmp_path)
    assert index.entries[0].sha256 == weights_sha256(build_model(CONFIG, seed=SETTINGS.seed, device="cpu"))
    assert index.entries[0].heldout_loss == pytest.approx(math.log(CONFIG.vocab_size), rel=0.1)
    data = json.loads((tmp_path / SNAPSHOT_DIR / INDEX_FILE).read_text())
    data["seed"] = SETTINGS.seed + 1  # a different init must be refused, not silently shown
    (tmp_path / SNAPSHOT_DIR / INDEX_FILE).write_text(json.dumps(data))
    with pytest.raises(SnapshotError, match="checksum"):
        snapshot_model(read_index(tmp_path), 0)


def test_same_seed_writes_the_same_snapshots(tmp_path: Path, stream: list[int]) -> None:
    steps = snapshot_schedule(SETTINGS.steps, 4)
    _run(tmp_path / "a", stream, steps)
    _run(tmp_path / "b", stream, steps)
    for name in sorted(p.name for p in (tmp_path / "a" / SNAPSHOT_DIR).iterdir()):
        assert (tmp_path / "a" / SNAPSHOT_DIR / name).read_bytes() == (tmp_path / "b" / SNAPSHOT_DIR / name).read_bytes(), name


def test_final_snapshot_must_match_the_model(tmp_path: Path, stream: list[int]) -> None:
    _run(tmp_path, stream, (0, SETTINGS.steps))
    with pytest.raises(SnapshotError, match="not the final snapshot"):
        snapshot_model(read_index(tmp_path), SETTINGS.steps, final_model=build_model(CONFIG, seed=9, device="cpu"))


def test_bad_index_and_steps_are_refused(tmp_path: Path, stream: list[int]) -> None:
    steps = snapshot_schedule(SETTINGS.steps, 4)
    _run(tmp_path, stream, steps)
    index = read_index(tmp_path)
    with pytest.raises(SnapshotError, match="no snapshot at step"):
        index.entry(99999)
    data = json.loads((tmp_path / SNAPSHOT_DIR / INDEX_FILE).read_text())
    data["snapshots"][1]["file"] = "../../model.safetensors"  # a path out of the folder
    (tmp_path / SNAPSHOT_DIR / INDEX_FILE).write_text(json.dumps(data))
    with pytest.raises(SnapshotError, match="file name"):
        read_index(tmp_path)
    with pytest.raises(SnapshotError, match="missing"):
        read_index(tmp_path / "nowhere")


def test_snapshot_names_parse_strictly() -> None:
    assert parse_snapshot_name(snapshot_name("classic", 241)) == ("classic", 241)
    for bad in ("classic @ step -1", "classic@step 3", "../x @ step 1", "classic @ step 99999999", 3, None, "x" * 100):
        assert parse_snapshot_name(bad) is None


# --- the loop's hooks ------------------------------------------------------------------------------


def test_progress_callback_and_stop_keep_what_was_learned(stream: list[int]) -> None:
    seen: list[Progress] = []
    stop = threading.Event()

    def on_progress(p: Progress) -> None:
        seen.append(p)
        if p.step == 10:
            stop.set()

    result = train_model(CONFIG, stream[:2500], stream[2500:], SETTINGS, device="cpu", progress=False,
                         on_progress=on_progress, stop=stop)
    assert result.stopped and result.steps_done == 10 and len(seen) == 10
    assert [p.step for p in seen] == list(range(1, 11))
    assert seen[-1].tokens == 10 * SETTINGS.batch_size * CONFIG.n_ctx == result.tokens_seen
    assert result.history[-1]["step"] == 10  # a last evaluation of what was learned before the stop
    assert result.history[-1]["heldout_loss"] < math.log(CONFIG.vocab_size)
    # a callable works as the stop flag too; stopping before the first step leaves the init
    early = train_model(CONFIG, stream[:2500], stream[2500:], SETTINGS, device="cpu", progress=False, stop=lambda: True)
    assert early.stopped and early.steps_done == 0 and early.history == []


def test_hooks_do_not_change_the_training(stream: list[int]) -> None:
    plain = train_model(CONFIG, stream[:2500], stream[2500:], SETTINGS, device="cpu", progress=False)
    hooked = train_model(CONFIG, stream[:2500], stream[2500:], SETTINGS, device="cpu", progress=False,
                         on_progress=lambda p: None, snapshot_steps=(0, 3, 24), on_snapshot=lambda *a: None)
    assert weights_sha256(plain.model) == weights_sha256(hooked.model)
    assert plain.train_losses == hooked.train_losses


def test_train_preset_writes_snapshots_next_to_the_model(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "train.txt").write_text((CORPUS / "train.txt").read_text(encoding="utf-8")[:40000], encoding="utf-8")
    (corpus / "heldout.txt").write_text((CORPUS / "heldout.txt").read_text(encoding="utf-8")[:6000], encoding="utf-8")
    probes = json.loads((CORPUS / "probes.json").read_text(encoding="utf-8"))
    few = [p for kind in ("capital", "coref") for p in [q for q in probes if q.get("kind") == kind][:3]]
    (corpus / "probes.json").write_text(json.dumps(few, ensure_ascii=False), encoding="utf-8")
    shutil.copytree(CORPUS / "tokenizer", corpus / "tokenizer")
    out = tmp_path / "model"
    settings = TrainSettings(steps=6, batch_size=2, warmup_steps=2, eval_interval=3)
    metrics = train_preset("classic", settings, out, corpus, device="cpu", progress=False, snapshots=4)
    index = read_index(out)
    assert index.steps == tuple(metrics["snapshot_steps"]) and index.steps[0] == 0 and index.steps[-1] == 6
    shipped = load_checkpoint(out, device="cpu")
    final = snapshot_model(index, 6, final_model=shipped.model)
    assert weights_sha256(final) == index.entries[-1].sha256
    assert "--snapshots 4" in metrics["command"]
    # retraining without snapshots removes the stale set (it would not match the new weights)
    train_preset("classic", settings, out, corpus, device="cpu", progress=False, snapshots=0)
    assert not (out / SNAPSHOT_DIR).exists()


# --- the shipped snapshot sets ---------------------------------------------------------------------


@pytest.mark.parametrize("preset", core.BUILTIN_PRESETS)
def test_builtin_snapshots(preset: str) -> None:
    index = read_index(ASSETS_MODELS / preset)
    assert len(index.steps) >= 8 and index.steps[0] == 0 and index.entries[-1].kind == "final"
    heldout = core.load_builtin(preset).tokenizer.encode((CORPUS / "heldout.txt").read_text(encoding="utf-8")[:20000])
    init = load_snapshot(preset, 0, device="cpu")
    assert evaluate_loss(init.model, heldout) == pytest.approx(math.log(index.config.vocab_size), rel=0.10)
    last = load_snapshot(preset, index.steps[-1], device="cpu")
    shipped = load_checkpoint(ASSETS_MODELS / preset, device="cpu")
    for (name, a), (_, b) in zip(last.model.state_dict().items(), shipped.model.state_dict().items()):
        assert torch.equal(a, b), name
    assert last.name == f"{preset} @ step {index.steps[-1]}"
    assert "probe_accuracy" not in init.metrics and init.metrics["snapshot"]["step"] == 0  # no final-model claims at step 0
    assert last.metrics.get("coref_heads") == shipped.metrics.get("coref_heads")
    middle = load_snapshot(preset, index.steps[len(index.steps) // 2], device="cpu")
    assert middle.model.config == shipped.config
    with pytest.raises(SnapshotError):
        load_snapshot(preset, 99999)


def test_a_snapshot_can_share_the_loaded_shipped_model() -> None:
    """A server's built-in lends its tokenizer to every snapshot, and the final step is that very model."""
    index = read_index(ASSETS_MODELS / "classic")
    shipped = load_checkpoint(ASSETS_MODELS / "classic", device="cpu", preset="classic")
    last = load_snapshot("classic", index.steps[-1], device="cpu", shipped=shipped)
    assert last.model is shipped.model and last.tokenizer is shipped.tokenizer
    step = index.steps[len(index.steps) // 2]
    middle = load_snapshot("classic", step, device="cpu", shipped=shipped)
    alone = load_snapshot("classic", step, device="cpu")
    assert middle.tokenizer is shipped.tokenizer and middle.model is not shipped.model
    for (name, a), (_, b) in zip(middle.model.state_dict().items(), alone.model.state_dict().items()):
        assert torch.equal(a, b), name
    assert middle.metrics == alone.metrics and middle.name == alone.name


def test_step_zero_is_regenerated_exactly_while_other_models_are_built() -> None:
    """A server builds models on several threads (a built-in loading while a student opens the
    Training page's step 0): torch's global random stream must not interleave with the seeded
    initialisation, or the step-0 checksum fails."""
    index = read_index(ASSETS_MODELS / "classic")
    errors: list[str] = []

    def regenerate() -> None:
        for _ in range(4):
            try:
                snapshot_model(index, 0)
            except SnapshotError as err:
                errors.append(str(err))

    def load() -> None:
        for _ in range(4):
            core.load_builtin("modern")

    threads = [threading.Thread(target=regenerate), threading.Thread(target=load), threading.Thread(target=load)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
