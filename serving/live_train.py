"""Live training jobs for the Training page: a micro-GPT trained from scratch while a class watches.

Pure Python (no Streamlit; torch only inside the worker process):

- ``JobSpec``: what to train (shape, design, steps, learning rate, batch, seed, corpus), checked.
- ``run_job``: the worker, run in a SEPARATE process (``multiprocessing`` "spawn", torch with one
  thread, ``nice`` 10), so the web server's Python (its GIL) stays free for every other student.
  It reports progress on a queue and ends by sending the weights (safetensors bytes) and the
  tokenizer; a stop flag ends it early with what it has learned so far.
- ``JobManager``: at most one running job per server core (by default cores − 1, at least 1,
  so one core stays for the pages), a FIFO queue with a position and a time estimate, one job
  per session, Stop (keeps the model) and cancel (discards it), and a heartbeat: a job whose
  page stopped polling (the student closed the tab) for ``heartbeat_timeout`` seconds is
  cancelled, queued or running.

Corpora: "capitals" (the bundled corpus' documents about capitals: the tiny preset learns
them within seconds), "full" (the whole bundled corpus), or "upload" (a teacher's own text,
at most 2 MB, with a BPE tokenizer trained on it by ``core.text.tokenizer.train_bpe``).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing as mp
import os
import queue as queue_module
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CORPORA",
    "Job",
    "JobError",
    "JobManager",
    "JobSpec",
    "JobView",
    "SessionBusy",
    "QueueFull",
    "capitals_subset",
    "run_job",
    "tokenizer_from_dict",
    "tokenizer_to_dict",
]

CORPORA = ("capitals", "full", "upload")
MAX_UPLOAD_BYTES = 2 * 1024 * 1024
MIN_UPLOAD_CHARS = 2000  # shorter text gives too few training windows to learn anything
UPLOAD_MERGES = 400  # BPE merges learned from a teacher's text (on its first 400 kB: seconds)
UPLOAD_BPE_CHARS = 400_000
STEP_LIMITS = {"tiny": 3000, "small": 2000, "builtin": 2000}
DEFAULT_STEPS = {"tiny": 200, "small": 300, "builtin": 200}  # tiny: ~30 s on one busy core
# Measured tokens per second on one thread of this 2-core server (for the queue's estimate);
# replaced by what finished jobs measure.
GUESS_TOKENS_PER_S = {"tiny": 12_000.0, "small": 6_000.0, "builtin": 3_000.0}
STARTUP_S = 4.0  # a spawned worker imports torch and tokenizes its corpus
_DOC_SPLIT = "<|endoftext|>"
_CAPITAL_RE = re.compile(r"capital|首都")


class JobError(Exception):
    """A job request the manager refuses (the page shows a translated message for ``code``)."""

    code = "error"


class SessionBusy(JobError):
    code = "busy"


class QueueFull(JobError):
    code = "queue_full"


# --- what to train -------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobSpec:
    """One training request. Every field is checked: the values come from a browser.

    Example: JobSpec(shape="tiny", steps=60)
    """

    shape: str = "tiny"  # core.training.train.SHAPES
    design: str = "classic"  # core.training.train.PRESETS
    steps: int = 200
    lr: float = 1e-2  # tiny models learn fast with a high peak rate; warm-up is 5 % of the steps
    batch_size: int = 16
    seed: int = 0
    corpus: str = "capitals"
    text: str | None = field(default=None, repr=False)  # the teacher's text when corpus == "upload"

    def __post_init__(self) -> None:
        from core.training.train import PRESETS, SHAPES  # core.training.train imports torch lazily enough: only names here

        if self.shape not in SHAPES or self.design not in PRESETS or self.corpus not in CORPORA:
            raise ValueError("unknown shape, design or corpus")
        for name, low, high in (("steps", 1, STEP_LIMITS[self.shape]), ("batch_size", 1, 64), ("seed", 0, 2**31 - 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an int in [{low}, {high}]")
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not 1e-5 <= float(self.lr) <= 0.1:
            raise ValueError("lr must be in [1e-5, 0.1]")
        if self.corpus == "upload":
            if not isinstance(self.text, str) or len(self.text) < MIN_UPLOAD_CHARS:
                raise ValueError(f"the text needs at least {MIN_UPLOAD_CHARS} characters")
            if len(self.text.encode("utf-8")) > MAX_UPLOAD_BYTES:
                raise ValueError("the text is larger than 2 MB")
        elif self.text is not None:
            raise ValueError("text is only for corpus='upload'")

    @property
    def tokens_per_step(self) -> int:
        from core.training.train import SHAPES

        return self.batch_size * SHAPES[self.shape]["n_ctx"]


def capitals_subset(text: str) -> str:
    """The documents of a corpus text that mention a capital (English or Chinese).

    Example: capitals_subset("<|endoftext|>The capital of Peru is Lima.<|endoftext|>A cat.") -> "<|endoftext|>The capital of Peru is Lima."
    """
    docs = [d for d in text.split(_DOC_SPLIT) if d.strip() and _CAPITAL_RE.search(d)]
    return "".join(_DOC_SPLIT + d.rstrip("\n") + "\n" for d in docs).rstrip("\n")


def split_documents(text: str, held_share: float) -> tuple[str, str]:
    """(train, held-out): the last ``held_share`` of the documents are held out.

    Example: split_documents("<|endoftext|>a<|endoftext|>b", 0.5) -> ("<|endoftext|>a", "<|endoftext|>b")
    """
    docs = [d for d in text.split(_DOC_SPLIT) if d.strip()]
    cut = max(1, min(len(docs) - 1, round(len(docs) * (1 - held_share)))) if len(docs) > 1 else len(docs)
    join = lambda part: "".join(_DOC_SPLIT + d for d in part)  # noqa: E731
    return join(docs[:cut]), join(docs[cut:])


def tokenizer_to_dict(tokenizer: Any) -> dict[str, Any]:
    """What ``BPETokenizer.save`` writes to bpe.json, as a dict (sent from the worker)."""
    return {
        "mode": tokenizer.mode, "base_vocab": list(tokenizer.base_vocab), "merges": [list(m) for m in tokenizer.merges],
        "cjk_lexicon": list(tokenizer.cjk_lexicon), "special_tokens": list(tokenizer.special_tokens),
    }


def tokenizer_from_dict(data: dict[str, Any]) -> Any:
    from core.text.tokenizer import BPETokenizer

    return BPETokenizer(data["mode"], data["base_vocab"], [tuple(m) for m in data["merges"]],
                        cjk_lexicon=data.get("cjk_lexicon", ()), special_tokens=data.get("special_tokens"))


def prepare_data(spec: JobSpec) -> tuple[Any, list[int], list[int]]:
    """(tokenizer, train ids, held-out ids) for a job."""
    from core.training.train import CORPUS_DIR

    if spec.corpus == "upload":
        from core.text.corpus import cjk_lexicon
        from core.text.tokenizer import train_bpe

        text = spec.text or ""
        cut = int(len(text) * 0.9)
        train_text, held_text = text[:cut], text[cut:]
        tokenizer = train_bpe(train_text[:UPLOAD_BPE_CHARS], UPLOAD_MERGES, mode="gpt", cjk_lexicon=cjk_lexicon()).tokenizer
    else:
        from core.text.tokenizer import BPETokenizer

        tokenizer = BPETokenizer.load(CORPUS_DIR / "tokenizer")
        train_text = (CORPUS_DIR / "train.txt").read_text(encoding="utf-8")
        held_text = (CORPUS_DIR / "heldout.txt").read_text(encoding="utf-8")
        if spec.corpus == "capitals":  # the held-out text has other template families: hold out 10 % of these
            train_text, held_text = split_documents(capitals_subset(train_text), 0.1)
    return tokenizer, tokenizer.encode(train_text), tokenizer.encode(held_text)


def settings_for(spec: JobSpec) -> Any:
    from core.training.train import TrainSettings

    return TrainSettings(steps=spec.steps, batch_size=spec.batch_size, lr=float(spec.lr),
                         warmup_steps=max(1, spec.steps // 20), eval_interval=max(1, spec.steps // 10), seed=spec.seed)


# --- the worker (its own process) ----------------------------------------------------------------


def run_job(spec: JobSpec, out: Any, stop: Any, threads: int = 1, niceness: int = 10) -> None:
    """Train ``spec`` and report on ``out``: ("ready", info), ("progress", point)..., then
    ("done", result) or ("error", message). ``stop`` is an Event: set, the job ends after the
    current step and still sends its model."""
    try:
        if niceness and hasattr(os, "nice"):
            try:
                os.nice(niceness)  # the pages' requests come first
            except OSError:
                pass
        import torch
        from safetensors.torch import save

        from core.engine import device as devices
        from core.training.train import shape_config, train_model

        torch.set_num_threads(max(1, threads))
        tokenizer, train_ids, held_ids = prepare_data(spec)
        config = shape_config(spec.shape, spec.design, tokenizer.vocab_size)
        if len(train_ids) <= config.n_ctx + 1:
            raise ValueError("the text is too short for this model's context")
        device = devices.pick()
        out.put(("ready", {"vocab": tokenizer.vocab_size, "train_tokens": len(train_ids), "heldout_tokens": len(held_ids),
                           "device": device}))

        def on_progress(p: Any) -> None:
            out.put(("progress", (p.step, round(p.loss, 4), p.tokens, round(p.seconds, 3),
                                  None if p.heldout_loss is None else round(p.heldout_loss, 4))))

        result = train_model(config, train_ids, held_ids, settings_for(spec), device=device, progress=False,
                             on_progress=on_progress, stop=stop.is_set, snapshot_steps=(0,),
                             on_snapshot=lambda step, model, info: out.put(("init", round(info["heldout_loss"], 4))))
        model = result.model.cpu()
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if not (config.tie_embeddings and k == "lm_head.weight")}
        import json

        meta = {"format": "token-journey-gpt/1", "config": json.dumps(config.to_dict())}
        out.put(("done", {
            "weights": save(state, metadata=meta), "config": config.to_dict(), "tokenizer": tokenizer_to_dict(tokenizer),
            "history": result.history, "stopped": result.stopped, "steps_done": result.steps_done,
            "seconds": result.seconds, "tokens_seen": result.tokens_seen,
            "tokens_per_second": result.tokens_seen / result.seconds if result.seconds > 0 else 0.0,
            "device": device, "params": model.num_params(),
            "trained_token_ids": sorted(set(train_ids)),  # the embedding map's PCA is fitted to these rows
        }))
    except Exception as err:  # sent to the page (translated there), never raised in the server
        out.put(("error", f"{type(err).__name__}: {err}"[:500]))


# --- the manager (in the server process) ---------------------------------------------------------

QUEUED, RUNNING, DONE, STOPPED, FAILED, CANCELLED = "queued", "running", "done", "stopped", "failed", "cancelled"
ACTIVE = (QUEUED, RUNNING)


@dataclass
class Job:
    job_id: str
    session: str
    spec: JobSpec
    created: float
    state: str = QUEUED
    points: list[tuple[Any, ...]] = field(default_factory=list)  # (step, loss, tokens, seconds, heldout or None)
    info: dict[str, Any] = field(default_factory=dict)
    init_loss: float | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    started: float | None = None
    ended: float | None = None
    last_poll: float = 0.0
    stop_requested: float | None = None
    process: Any = field(default=None, repr=False)
    channel: Any = field(default=None, repr=False)
    stop_event: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class JobView:
    """A read-only copy of a job for a page (no process handles)."""

    job_id: str
    state: str
    spec: JobSpec
    position: int | None  # 1 = next to start (queued jobs only)
    eta_s: float | None  # seconds until it starts (queued) or ends (running)
    points: tuple[tuple[Any, ...], ...]
    info: dict[str, Any]
    init_loss: float | None
    result: dict[str, Any] | None
    error: str | None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def steps_done(self) -> int:
        return int(self.points[-1][0]) if self.points else 0


def default_slots(forced: int | None = None) -> int:
    """``forced`` jobs at once (default: the ``train_jobs`` setting) when above 0; else one job
    per core at most, and one core left for the pages: max(1, cores - 1).

    Example: default_slots(3) -> 3
    """
    if forced is None:
        from serving.settings import active

        forced = active().train_jobs
    if forced > 0:
        return forced
    return max(1, (os.cpu_count() or 1) - 1)


class JobManager:
    """FIFO training queue with per-session and per-server limits (thread-safe).

    Example:
        jobs = JobManager()
        job = jobs.submit("session-1", JobSpec(steps=60))
        view = jobs.poll(job)   # also the heartbeat; call it from the page every second or so
    """

    def __init__(self, max_running: int | None = None, *, heartbeat_timeout: float = 30.0, max_queue: int = 64,
                 target: Callable[..., None] = run_job, start_method: str = "spawn", tick_s: float = 0.1,
                 stop_grace_s: float = 20.0, max_job_s: float = 900.0, keep_finished_s: float = 600.0) -> None:
        self.max_running = max_running or default_slots()
        self.heartbeat_timeout = heartbeat_timeout
        self.max_queue = max_queue
        self.target = target
        self.context = mp.get_context(start_method)
        self.tick_s = tick_s
        self.stop_grace_s = stop_grace_s
        self.max_job_s = max_job_s
        self.keep_finished_s = keep_finished_s
        self._jobs: dict[str, Job] = {}
        self._queue: list[str] = []
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._rate: dict[str, float] = dict(GUESS_TOKENS_PER_S)
        self._monitor: threading.Thread | None = None
        self._closed = threading.Event()

    # -- requests from pages --

    def submit(self, session: str, spec: JobSpec) -> str:
        """Queue a job; raises ``SessionBusy`` if the session has one queued or running, ``QueueFull``."""
        if not isinstance(spec, JobSpec):
            raise TypeError("spec must be a JobSpec")
        now = time.monotonic()
        with self._lock:
            if any(j.session == session and j.state in ACTIVE for j in self._jobs.values()):
                raise SessionBusy("this session already has a training job")
            if len(self._queue) >= self.max_queue:
                raise QueueFull("the training queue is full")
            job_id = f"job-{next(self._ids)}"
            self._jobs[job_id] = Job(job_id, session, spec, created=now, last_poll=now)
            self._queue.append(job_id)
            self._start_monitor()
        self._tick()
        return job_id

    def poll(self, job_id: str) -> JobView | None:
        """The job's state (None if unknown); also its heartbeat."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            job.last_poll = time.monotonic()
            return self._view(job)

    def heartbeat(self, job_id: str) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                job.last_poll = time.monotonic()

    def stop(self, job_id: str) -> None:
        """End a job early and keep what it learned (a queued job is simply cancelled)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            if job.state == QUEUED:
                self._finish(job, CANCELLED)
            elif job.state == RUNNING and job.stop_requested is None:
                job.stop_requested = time.monotonic()
                job.stop_event.set()

    def cancel(self, job_id: str, reason: str = "cancelled") -> None:
        """End a job and discard its model."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.state not in ACTIVE:
                return
            job.error = reason
            if job.state == RUNNING:
                job.stop_event.set()
                self._kill(job)
            self._finish(job, CANCELLED)

    def forget(self, job_id: str) -> None:
        """Drop a finished job's record (its model was taken)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None and job.state not in ACTIVE:
                del self._jobs[job_id]

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"running": sum(j.state == RUNNING for j in self._jobs.values()), "queued": len(self._queue),
                    "slots": self.max_running}

    def close(self) -> None:
        """Cancel everything and stop the monitor (tests, server exit)."""
        self._closed.set()
        with self._lock:
            for job_id in list(self._jobs):
                self.cancel(job_id, "server stopping")
        if self._monitor is not None and self._monitor is not threading.current_thread():
            self._monitor.join(5)

    # -- the monitor --

    def _start_monitor(self) -> None:
        if self._monitor is not None and self._monitor.is_alive():
            return
        from serving.registry import start_worker

        self._monitor = start_worker(self._loop, "training-jobs")

    def _loop(self) -> None:
        from serving.registry import SHUTTING_DOWN

        while not self._closed.is_set():
            if SHUTTING_DOWN.is_set():
                self.close()
                return
            self._tick()
            with self._lock:
                idle = not self._queue and not any(j.state == RUNNING for j in self._jobs.values())
            time.sleep(self.tick_s * (5 if idle else 1))

    def _tick(self) -> None:
        now = time.monotonic()
        with self._lock:
            for job in list(self._jobs.values()):
                if job.state == RUNNING:
                    self._drain(job)
                if job.state in ACTIVE and now - job.last_poll > self.heartbeat_timeout:
                    self.cancel(job.job_id, "no heartbeat")  # the page went away
                elif job.state == RUNNING:
                    self._check_running(job, now)
                elif job.state not in ACTIVE and job.ended is not None and now - job.ended > self.keep_finished_s:
                    del self._jobs[job.job_id]
            while self._queue and sum(j.state == RUNNING for j in self._jobs.values()) < self.max_running:
                self._launch(self._jobs[self._queue.pop(0)])

    def _launch(self, job: Job) -> None:
        job.channel = self.context.Queue()
        job.stop_event = self.context.Event()
        job.process = self.context.Process(target=self.target, args=(job.spec, job.channel, job.stop_event),
                                           name=f"token-journey-{job.job_id}", daemon=True)
        job.state = RUNNING
        job.started = time.monotonic()
        job.process.start()

    def _drain(self, job: Job) -> None:
        while True:
            try:
                kind, payload = job.channel.get_nowait()
            except (queue_module.Empty, EOFError, OSError, ValueError):
                return
            if kind == "progress":
                job.points.append(tuple(payload))
            elif kind == "ready":
                job.info = dict(payload)
            elif kind == "init":
                job.init_loss = payload
            elif kind == "done":
                job.result = payload
                rate = float(payload.get("tokens_per_second") or 0.0)
                if rate > 0:
                    self._rate[job.spec.shape] = 0.5 * self._rate[job.spec.shape] + 0.5 * rate
                self._finish(job, STOPPED if payload.get("stopped") else DONE)
                return
            elif kind == "error":
                job.error = str(payload)
                self._finish(job, FAILED)
                return

    def _check_running(self, job: Job, now: float) -> None:
        if job.started is not None and now - job.started > self.max_job_s and job.stop_requested is None:
            job.stop_requested = now
            job.stop_event.set()  # too long: stop, keep the model
        if job.stop_requested is not None and now - job.stop_requested > self.stop_grace_s:
            job.error = "did not stop"
            self._kill(job)
            self._finish(job, FAILED)
        elif job.process is not None and not job.process.is_alive():
            self._drain(job)  # the last messages may arrive with the exit
            if job.state == RUNNING:
                job.error = f"the training process ended (exit code {job.process.exitcode})"
                self._finish(job, FAILED)

    def _kill(self, job: Job) -> None:
        process = job.process
        if process is not None and process.is_alive():
            process.terminate()

    def _finish(self, job: Job, state: str) -> None:
        job.state = state
        job.ended = time.monotonic()
        if job.job_id in self._queue:
            self._queue.remove(job.job_id)
        if job.channel is not None and state != RUNNING:
            threading.Thread(target=self._reap, args=(job.process, job.channel), daemon=True).start()
            job.channel = None

    @staticmethod
    def _reap(process: Any, channel: Any) -> None:
        if process is not None:
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join(5)
        try:
            channel.close()
            channel.cancel_join_thread()
        except (OSError, ValueError, AttributeError):
            pass

    # -- estimates --

    def expected_seconds(self, spec: JobSpec) -> float:
        """How long a job is expected to run (start-up + steps at the measured speed)."""
        return STARTUP_S + spec.steps * spec.tokens_per_step / max(1.0, self._rate.get(spec.shape, 3000.0))

    def _remaining(self, job: Job, now: float) -> float:
        total = self.expected_seconds(job.spec)
        if job.points:
            step, _loss, _tokens, seconds = job.points[-1][:4]
            per_step = seconds / max(1, step)
            return max(0.0, (job.spec.steps - step) * per_step)
        return max(0.0, total - (now - (job.started or now)))

    def _view(self, job: Job) -> JobView:
        now = time.monotonic()
        position = eta = None
        if job.state == QUEUED and job.job_id in self._queue:
            position = self._queue.index(job.job_id) + 1
            free = sorted(self._remaining(j, now) for j in self._jobs.values() if j.state == RUNNING)
            free += [0.0] * (self.max_running - len(free))
            for ahead in self._queue[: position - 1]:  # greedy: each queued job takes the first free slot
                free.sort()
                free[0] += self.expected_seconds(self._jobs[ahead].spec)
            eta = min(free) if free else 0.0
        elif job.state == RUNNING:
            eta = self._remaining(job, now)
        return JobView(job.job_id, job.state, job.spec, position, eta, tuple(job.points), dict(job.info), job.init_loss,
                       job.result, job.error)


def loss_drop(points: Any) -> float:
    """Relative fall of the training loss from the first to the last tenth of the points (0 = none)."""
    losses = [p[1] for p in points]
    if len(losses) < 2:
        return 0.0
    k = max(1, len(losses) // 10)
    first, last = sum(losses[:k]) / k, sum(losses[-k:]) / k
    return (first - last) / first if first > 0 and math.isfinite(first) else 0.0


def check_upload(data: bytes) -> str:
    """A teacher's uploaded .txt as text, or ValueError with a code: "too_big", "not_utf8", "too_short".

    Example: check_upload("字".encode() * 3000)[:2] -> "字字"
    """
    if not isinstance(data, (bytes, bytearray)):
        raise ValueError("not_utf8")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError("too_big")
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError("not_utf8") from None
    if "\x00" in text or any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise ValueError("not_utf8")
    if len(text.strip()) < MIN_UPLOAD_CHARS:
        raise ValueError("too_short")
    return text


def loaded_from_result(result: dict[str, Any], name: str) -> Any:
    """A ``LoadedModel`` (CPU, eval) from a finished job's result, checked like a checkpoint."""
    import torch
    from safetensors.torch import load

    from core.engine.checkpoint import LoadedModel
    from core.engine.model import GPT, GPTConfig

    config = GPTConfig.from_dict(result["config"])
    tokenizer = tokenizer_from_dict(result["tokenizer"])
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError("the tokenizer does not match the model")
    state = load(bytes(result["weights"]))
    model = GPT(config)
    expected = set(model.state_dict()) - ({"lm_head.weight"} if config.tie_embeddings else set())
    if set(state) != expected:
        raise ValueError("the weights do not match the config")
    model.load_state_dict(state, strict=False)
    if not all(torch.isfinite(t).all() for t in model.state_dict().values()):
        raise ValueError("the weights are not finite")
    metrics = {"history": result.get("history", []), "steps": result.get("steps_done"), "params": model.num_params(),
               "device": result.get("device"), "tokens_seen": result.get("tokens_seen"),
               "trained_token_ids": [int(i) for i in result.get("trained_token_ids", [])]}
    from core.engine import device as devices

    model = model.to(devices.pick()).eval()
    return LoadedModel(name=name, model=model, tokenizer=tokenizer, config=config, metrics=metrics, folder=None)
