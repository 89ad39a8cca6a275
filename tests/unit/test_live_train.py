"""Live training: the job spec's checks, the job manager (queue, limits, stop, cancel, heartbeat),
the worker in a real spawned process, and the tiny preset learning fast.

The manager tests run a light fake worker (no torch) in spawned processes, so they are quick.
"""

from __future__ import annotations

import math
import queue
import threading
import time

import pytest

from serving.live_train import (
    CANCELLED,
    DONE,
    FAILED,
    QUEUED,
    RUNNING,
    STOPPED,
    JobManager,
    JobSpec,
    QueueFull,
    SessionBusy,
    capitals_subset,
    loss_drop,
    run_job,
    tokenizer_from_dict,
    tokenizer_to_dict,
)


def fake_job(spec: JobSpec, out, stop) -> None:
    """A worker without torch: one "step" per 20 ms, the loss falling; stops when asked."""
    out.put(("ready", {"vocab": 10, "device": "cpu"}))
    out.put(("init", 2.3))
    done = 0
    for step in range(1, spec.steps + 1):
        if stop.is_set():
            break
        time.sleep(0.02)
        done = step
        out.put(("progress", (step, 2.3 / step, step * 16, step * 0.02, None)))
    out.put(("done", {"weights": b"w", "stopped": done < spec.steps, "steps_done": done, "tokens_per_second": 800.0}))


def crashing_job(spec: JobSpec, out, stop) -> None:
    raise SystemExit(3)


def wait_for(manager: JobManager, job_id: str, states: tuple[str, ...], timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        view = manager.poll(job_id)
        if view is not None and view.state in states:
            return view
        time.sleep(0.05)
    raise AssertionError(f"{job_id} did not reach {states}: {manager.poll(job_id)}")


@pytest.fixture()
def manager():
    jobs = JobManager(max_running=1, target=fake_job, heartbeat_timeout=30.0, tick_s=0.02)
    yield jobs
    jobs.close()


# --- spec ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [
    dict(shape="huge"), dict(design="x"), dict(corpus="/etc/passwd"), dict(steps=0), dict(steps=10**6),
    dict(steps=True), dict(lr=1.0), dict(lr=float("nan")), dict(batch_size=0), dict(seed=-1),
    dict(corpus="upload", text="short"), dict(corpus="upload", text="字" * 800_000), dict(text="not for bundled"),
])
def test_bad_specs_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        JobSpec(**bad)


def test_capitals_subset_keeps_capital_documents() -> None:
    text = "<|endoftext|>The capital of Peru is Lima.\n<|endoftext|>A cat sat.\n<|endoftext|>法国的首都是巴黎。\n"
    subset = capitals_subset(text)
    assert "Lima" in subset and "巴黎" in subset and "cat" not in subset
    assert subset.count("<|endoftext|>") == 2


# --- manager ---------------------------------------------------------------------------------------


def test_queue_is_fifo_with_position_and_estimate(manager: JobManager) -> None:
    first = manager.submit("a", JobSpec(steps=40))
    second = manager.submit("b", JobSpec(steps=10))
    third = manager.submit("c", JobSpec(steps=10))
    wait_for(manager, first, (RUNNING,))
    v2, v3 = manager.poll(second), manager.poll(third)
    assert (v2.state, v2.position) == (QUEUED, 1) and (v3.state, v3.position) == (QUEUED, 2)
    assert 0 < v2.eta_s < v3.eta_s  # the later one waits longer
    assert manager.counts() == {"running": 1, "queued": 2, "slots": 1}
    done = wait_for(manager, first, (DONE,))
    assert done.result["steps_done"] == 40 and done.steps_done == 40 and done.init_loss == 2.3
    assert [p[0] for p in done.points] == list(range(1, 41))
    wait_for(manager, second, (RUNNING, DONE))
    assert wait_for(manager, third, (DONE,)).result["weights"] == b"w"


def test_one_job_per_session_and_a_bounded_queue() -> None:
    jobs = JobManager(max_running=1, target=fake_job, max_queue=2, tick_s=0.02)
    try:
        jobs.submit("a", JobSpec(steps=200))
        with pytest.raises(SessionBusy):
            jobs.submit("a", JobSpec(steps=5))
        wait_for(jobs, "job-1", (RUNNING,))
        jobs.submit("b", JobSpec(steps=5))
        jobs.submit("c", JobSpec(steps=5))
        with pytest.raises(QueueFull):
            jobs.submit("d", JobSpec(steps=5))
    finally:
        jobs.close()


def test_slots_run_jobs_side_by_side() -> None:
    jobs = JobManager(max_running=2, target=fake_job, tick_s=0.02)
    try:
        a, b = jobs.submit("a", JobSpec(steps=100)), jobs.submit("b", JobSpec(steps=100))
        wait_for(jobs, a, (RUNNING,))
        wait_for(jobs, b, (RUNNING,))
        assert jobs.counts()["running"] == 2
    finally:
        jobs.close()


def test_stop_keeps_what_was_learned(manager: JobManager) -> None:
    job = manager.submit("a", JobSpec(steps=2000))
    view = wait_for(manager, job, (RUNNING,))
    while not view.points:
        view = manager.poll(job)
        time.sleep(0.02)
    manager.stop(job)
    view = wait_for(manager, job, (STOPPED,))
    assert view.result is not None and 0 < view.result["steps_done"] < 2000
    # the session may train again once its job ended
    again = manager.submit("a", JobSpec(steps=2))
    assert wait_for(manager, again, (DONE,)).state == DONE


def test_stop_of_a_queued_job_and_cancel_discard(manager: JobManager) -> None:
    running = manager.submit("a", JobSpec(steps=2000))
    queued = manager.submit("b", JobSpec(steps=5))
    wait_for(manager, running, (RUNNING,))
    manager.stop(queued)
    assert manager.poll(queued).state == CANCELLED
    manager.cancel(running)
    view = manager.poll(running)
    assert view.state == CANCELLED and view.result is None


def test_a_job_without_heartbeat_is_cancelled() -> None:
    jobs = JobManager(max_running=1, target=fake_job, heartbeat_timeout=0.6, tick_s=0.02)
    try:
        running = jobs.submit("gone", JobSpec(steps=2000))
        queued = jobs.submit("also-gone", JobSpec(steps=5))
        alive = jobs.submit("here", JobSpec(steps=5))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # only "here" keeps polling
            jobs.heartbeat(alive)
            with jobs._lock:
                states = (jobs._jobs[running].state, jobs._jobs[queued].state)
            if states == (CANCELLED, CANCELLED):
                break
            time.sleep(0.05)
        assert states == (CANCELLED, CANCELLED)
        assert jobs.poll(running).error == "no heartbeat"
        assert wait_for(jobs, alive, (DONE,)).state == DONE  # the freed slot went to the live session
    finally:
        jobs.close()


def test_a_crashed_worker_is_reported(manager: JobManager) -> None:
    jobs = JobManager(max_running=1, target=crashing_job, tick_s=0.02)
    try:
        job = jobs.submit("a", JobSpec(steps=5))
        view = wait_for(jobs, job, (FAILED,))
        assert "exit code 3" in view.error
    finally:
        jobs.close()


# --- the real worker -------------------------------------------------------------------------------


def test_tokenizer_travels_as_a_dict() -> None:
    from core.text.corpus import cjk_lexicon
    from core.text.tokenizer import train_bpe

    tok = train_bpe("the cat sat on the mat " * 20, 10, mode="gpt", cjk_lexicon=cjk_lexicon()).tokenizer
    back = tokenizer_from_dict(tokenizer_to_dict(tok))
    assert back.vocab() == tok.vocab() and back.encode("the cat") == tok.encode("the cat")


def test_run_job_in_process_with_stop() -> None:
    out: queue.Queue = queue.Queue()
    stop = threading.Event()
    spec = JobSpec(steps=30, batch_size=4)

    class Watch(queue.Queue):
        def put(self, item, *a, **k):
            out.put(item)
            if item[0] == "progress" and item[1][0] == 5:
                stop.set()

    run_job(spec, Watch(), stop, niceness=0)
    messages = []
    while not out.empty():
        messages.append(out.get())
    kinds = [m[0] for m in messages]
    assert kinds[0] == "ready" and kinds[-1] == "done", messages[-1]
    done = messages[-1][1]
    assert done["stopped"] and done["steps_done"] == 5
    from safetensors.torch import load

    state = load(done["weights"])
    assert state["wte.weight"].shape[1] == 64 and "lm_head.weight" not in state


def test_run_job_with_an_uploaded_text() -> None:
    out: queue.Queue = queue.Queue()
    text = "\n".join(f"Day {i}: the teacher reads a story about a fox and a crow." for i in range(200))
    run_job(JobSpec(steps=3, batch_size=2, corpus="upload", text=text), out, threading.Event(), niceness=0)
    messages = []
    while not out.empty():
        messages.append(out.get())
    assert messages[-1][0] == "done", messages[-1]
    tok = tokenizer_from_dict(messages[-1][1]["tokenizer"])
    assert tok.decode(tok.encode("a fox and a crow")) == "a fox and a crow"


def test_real_worker_in_a_spawned_process() -> None:
    jobs = JobManager(max_running=1, tick_s=0.05)
    try:
        job = jobs.submit("a", JobSpec(steps=4, batch_size=2))
        view = wait_for(jobs, job, (DONE, FAILED), timeout=120)
        assert view.state == DONE, view.error
        assert view.steps_done == 4 and view.result["params"] > 0 and view.info["vocab"] > 100
    finally:
        jobs.close()


def test_tiny_preset_learns_in_60_steps() -> None:
    """The acceptance bar: 60 steps of the tiny preset lower the held-out loss by >= 30 %."""
    import torch

    from serving.live_train import prepare_data, settings_for
    from core.training.train import evaluate_loss, shape_config, train_model

    torch.set_num_threads(1)
    spec = JobSpec(steps=60)
    tokenizer, train_ids, held_ids = prepare_data(spec)
    config = shape_config("tiny", "classic", tokenizer.vocab_size)
    result = train_model(config, train_ids, held_ids, settings_for(spec), device="cpu", progress=False, snapshot_steps=(0,))
    start = result.snapshots[0]["heldout_loss"]
    assert start == pytest.approx(math.log(tokenizer.vocab_size), rel=0.1)
    end = evaluate_loss(result.model, held_ids)
    assert end <= 0.7 * start, (start, end)
    assert loss_drop([(i, v) for i, v in enumerate(result.train_losses)]) > 0.3


def test_the_training_command_starts_from_the_presets_settings_and_takes_overrides(monkeypatch) -> None:
    """python -m core.training.train uses a preset's own settings (PRESET_SETTINGS) unless --lr or
    --weight-decay say otherwise; an unknown preset is refused."""
    import pytest

    from core.training import train

    seen: dict[str, object] = {}

    def fake_train_preset(preset, settings, *args, **kwargs):
        seen["preset"], seen["settings"] = preset, settings
        return {"params": 1, "steps": settings.steps, "train_seconds": 0.0, "train_loss": 0.0, "heldout_loss": 0.0,
                "heldout_perplexity": 1.0, "probe_accuracy": {}, "embedding": {}}

    monkeypatch.setattr(train, "train_preset", fake_train_preset)
    train.main(["--preset", "modern", "--steps", "7"])
    assert seen["settings"] == train.replace(train.preset_settings("modern"), steps=7)
    train.main(["--preset", "classic", "--steps", "7", "--lr", "0.002", "--weight-decay", "0.2"])
    assert (seen["settings"].lr, seen["settings"].weight_decay, seen["settings"].steps) == (0.002, 0.2, 7)
    assert seen["settings"].min_lr_ratio == train.preset_settings("classic").min_lr_ratio
    train.main(["--preset", "modern", "--steps", "7", "--min-lr-ratio", "0"])
    assert seen["settings"].min_lr_ratio == 0.0
    # The seed, too: without --seed a run repeats the preset's own seed (the shipped model's).
    monkeypatch.setitem(train.PRESET_SETTINGS, "classic", {"seed": 5})
    train.main(["--preset", "classic", "--steps", "7"])
    assert seen["settings"].seed == 5
    train.main(["--preset", "classic", "--steps", "7", "--seed", "2"])
    assert seen["settings"].seed == 2
    # And the number of steps: without --steps, the preset's (the shipped models': 3,200).
    train.main(["--preset", "modern"])
    assert seen["settings"] == train.preset_settings("modern") and seen["settings"].steps == 3200
    monkeypatch.setitem(train.PRESET_SETTINGS, "classic", {"steps": 50})
    train.main(["--preset", "classic"])
    assert seen["settings"].steps == 50
    with pytest.raises(ValueError):
        train.preset_settings("nonexistent")


def test_the_recorded_training_command_keeps_an_experiments_overrides() -> None:
    """metrics.json's "command" must repeat the run: a changed lr or weight decay is spelled out
    (it was dropped before, so two experiments' metrics showed the same command)."""
    from core.training import train

    plain = train.training_command("modern", train.preset_settings("modern"), 1, 12)
    assert "--lr" not in plain and "--weight-decay" not in plain
    assert plain.startswith("python -m core.training.train --preset modern --steps 3200 --seed 2 --threads 1 --snapshots 12")  # the shipped run
    changed = train.replace(train.preset_settings("modern"), lr=1e-3, weight_decay=0.3, seed=7, min_lr_ratio=0.05)
    command = train.training_command("modern", changed, 1, 12)
    assert "--seed 7" in command and "--lr 0.001" in command and "--weight-decay 0.3" in command
    assert "--min-lr-ratio 0.05" in command
    # the command line parses back to the same settings
    args = command.split()[3:]
    parsed = dict(zip(args[::2], args[1::2]))
    assert float(parsed["--lr"]) == changed.lr and float(parsed["--weight-decay"]) == changed.weight_decay
    assert float(parsed["--min-lr-ratio"]) == changed.min_lr_ratio


def test_job_slots_come_from_the_train_jobs_setting() -> None:
    import os

    from serving.live_train import default_slots

    assert default_slots(3) == 3
    assert default_slots(0) == max(1, (os.cpu_count() or 1) - 1)  # 0: one per core, one left for the pages
