"""Snapshots of a model taken during its training run, for the Training page's replay.

A built-in model's folder holds ``snapshots/`` next to its weights::

    assets/models/classic/
        model.safetensors            the final weights = the LAST snapshot (not stored twice)
        snapshots/index.json         steps, tokens seen, train and held-out loss per snapshot,
                                     the per-step training loss, formats and checksums
        snapshots/step_000010.safetensors ...   the intermediate snapshots, int8 (see below)

Storage, chosen to keep the repository small (~1.5 M parameters per model, two models):

- **Step 0 is not stored.** The random initialisation is regenerated bit-exactly from the
  seed by the same code path training used (``core.engine.model.build_model(config, seed)``); the
  index keeps the SHA-256 of those weights and the loader refuses a mismatch.
- **The final snapshot is the shipped ``model.safetensors``** (its checksum is in the index too).
- **Intermediate snapshots are int8 with one fp16 scale per row** ("absmax" quantisation:
  ``scale = max|row| / 127``, ``q = round(w / scale)``), 1-D tensors (norm gains, biases) in
  fp16: about 1 byte per parameter, 1/4 of fp32. Their error is at most half a step
  (``scale / 2``) per weight; the losses in the index are those of the full-precision
  weights at that step.

How many steps: step 0 plus ``count`` steps spaced evenly on a log scale from
``total / 200`` to the end (the loss falls fastest early on), fewer if the int8 files would
exceed the byte budget. ``python -m core.training.train`` writes them; the same seed on the same
device and thread count reproduces the same files byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from core.engine.model import GPT, GPTConfig, build_model

__all__ = [
    "INDEX_FILE",
    "SNAPSHOT_DIR",
    "SnapshotEntry",
    "SnapshotError",
    "SnapshotIndex",
    "SnapshotWriter",
    "dequantize_state",
    "fit_to_budget",
    "load_snapshot",
    "parse_snapshot_name",
    "quantize_state",
    "read_index",
    "snapshot_model",
    "snapshot_name",
    "snapshot_schedule",
    "snapshot_file_bytes",
    "weights_sha256",
]

FORMAT = "token-journey-snapshots/1"
QUANT = "int8-rowwise-absmax+fp16-scale; 1-D fp16"
SNAPSHOT_DIR = "snapshots"
INDEX_FILE = "index.json"
SCALE_SUFFIX = ".__scale"
_FILE_RE = re.compile(r"^step_\d{6,7}\.safetensors$")  # the only file names the loader opens
_NAME_RE = re.compile(r"^(?P<preset>[a-z][a-z0-9_-]{0,31}) @ step (?P<step>\d{1,7})$")
MAX_STEP = 9_999_999


class SnapshotError(ValueError):
    """A snapshot set is missing, inconsistent, or the step asked for does not exist."""


# --- which steps -------------------------------------------------------------------------------


def snapshot_schedule(total_steps: int, count: int = 12, first: int | None = None) -> tuple[int, ...]:
    """Step 0 plus up to ``count`` log-spaced steps from ``first`` (default total/200) to ``total_steps``.

    Example: snapshot_schedule(2000, 11) -> (0, 10, 17, 29, 49, 83, 141, 240, 408, 693, 1177, 2000)
    """
    if total_steps < 1 or count < 0:
        raise ValueError("total_steps must be >= 1 and count >= 0")
    if count == 0:
        return (0,)
    start = max(1, first if first is not None else round(total_steps / 200))
    start = min(start, total_steps)
    if count == 1 or start == total_steps:
        return (0, total_steps)
    ratio = (total_steps / start) ** (1 / (count - 1))
    steps = {0, total_steps}
    for i in range(count - 1):
        steps.add(min(total_steps, max(1, round(start * ratio**i))))
    return tuple(sorted(steps))


def snapshot_file_bytes(config: GPTConfig) -> int:
    """Bytes of one int8 snapshot file of a model of this shape (data only, without the header).

    Example: snapshot_file_bytes(GPTConfig.tiny()) -> 9092
    """
    model = config if isinstance(config, GPT) else build_model(config, seed=0, device="cpu")
    total = 0
    for tensor in _parameters(model).values():
        if tensor.dim() >= 2:
            total += tensor.numel() + 2 * tensor.shape[0]  # int8 values + one fp16 scale per row
        else:
            total += 2 * tensor.numel()
    return total


def fit_to_budget(total_steps: int, count: int, config: GPTConfig, budget_bytes: int) -> tuple[int, ...]:
    """The largest log-spaced schedule (at most ``count``) whose intermediate files fit the budget.

    Example: fit_to_budget(2000, 12, config, 14 * 2**20)  # fewer steps for a bigger vocabulary
    """
    per_file = snapshot_file_bytes(config) + 8 * 1024  # + the safetensors JSON header, generously
    for n in range(count, -1, -1):
        steps = snapshot_schedule(total_steps, n)
        intermediate = [s for s in steps if 0 < s < total_steps]
        if len(intermediate) * per_file <= budget_bytes:
            return steps
    return (0, total_steps)


# --- weights: checksum and int8 ------------------------------------------------------------------


def _parameters(model: GPT) -> dict[str, torch.Tensor]:
    """The stored tensors of a model (a tied lm_head is wte: kept once), on CPU, fp32."""
    state = {name: t.detach().to("cpu", torch.float32).contiguous() for name, t in model.state_dict().items()}
    if model.config.tie_embeddings:
        state.pop("lm_head.weight", None)
    return state


def weights_sha256(source: GPT | Mapping[str, torch.Tensor]) -> str:
    """SHA-256 of a model's weights as fp32 (names sorted, each with its shape), device-independent.

    Example: weights_sha256(build_model(config, seed=0, device="cpu"))[:12]
    """
    state = _parameters(source) if isinstance(source, GPT) else {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in source.items()}
    digest = hashlib.sha256()
    for name in sorted(state):
        tensor = state[name]
        digest.update(f"{name}:{tuple(tensor.shape)}\n".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def quantize_state(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """int8 per-row absmax (fp16 scales) for matrices, fp16 for vectors.

    Example: quantize_state({"w": torch.ones(2, 3)})["w"].dtype -> torch.int8
    """
    out: dict[str, torch.Tensor] = {}
    for name, tensor in state.items():
        values = tensor.detach().to("cpu", torch.float32)
        if values.dim() >= 2:
            rows = values.reshape(values.shape[0], -1)  # (row, rest)
            scale = (rows.abs().amax(dim=1) / 127.0).to(torch.float16)  # (row,)
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))  # an all-zero row: any scale
            q = torch.round(rows / scale.float()[:, None]).clamp(-127, 127).to(torch.int8)
            out[name] = q.reshape(values.shape).contiguous()
            out[name + SCALE_SUFFIX] = scale.contiguous()
        else:
            out[name] = values.to(torch.float16).contiguous()
    return out


def dequantize_state(stored: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The fp32 weights back from ``quantize_state``'s output.

    Example: dequantize_state(quantize_state(state))["wte.weight"].dtype -> torch.float32
    """
    out: dict[str, torch.Tensor] = {}
    for name, tensor in stored.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        if tensor.dtype == torch.int8:
            scale = stored.get(name + SCALE_SUFFIX)
            if scale is None or scale.dim() != 1 or scale.shape[0] != tensor.shape[0]:
                raise SnapshotError(f"{name}: missing or misshaped scale")
            rows = tensor.reshape(tensor.shape[0], -1).float() * scale.float()[:, None]
            out[name] = rows.reshape(tensor.shape)
        elif tensor.dtype == torch.float16:
            out[name] = tensor.float()
        else:
            raise SnapshotError(f"{name}: unexpected dtype {tensor.dtype}")
    return out


# --- the index -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotEntry:
    step: int
    tokens_seen: int
    train_loss: float
    heldout_loss: float
    kind: str  # "init" (regenerated from the seed), "int8" (a file), "final" (model.safetensors)
    sha256: str  # of the full-precision weights at that step (for "int8": before quantisation)
    file: str | None = None


@dataclass(frozen=True)
class SnapshotIndex:
    preset: str
    seed: int
    total_steps: int
    config: GPTConfig
    entries: tuple[SnapshotEntry, ...]
    train_log: tuple[float, ...] = ()  # the training loss of every step (step i+1 at index i)
    heldout_log: tuple[tuple[int, float], ...] = ()  # (step, held-out loss) at evaluations and snapshots
    folder: Path | None = field(default=None, compare=False)

    @property
    def steps(self) -> tuple[int, ...]:
        return tuple(e.step for e in self.entries)

    def entry(self, step: int) -> SnapshotEntry:
        for e in self.entries:
            if e.step == step:
                return e
        raise SnapshotError(f"no snapshot at step {step}; the snapshots are at steps {list(self.steps)}")


def _as_entry(row: Any) -> SnapshotEntry:
    if not isinstance(row, dict):
        raise SnapshotError("snapshot row is not an object")
    kind = row.get("kind")
    file = row.get("file")
    if kind not in ("init", "int8", "final"):
        raise SnapshotError(f"unknown snapshot kind {kind!r}")
    if kind == "int8" and (not isinstance(file, str) or not _FILE_RE.match(file)):
        raise SnapshotError(f"bad snapshot file name {file!r}")
    step = row.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        raise SnapshotError(f"bad snapshot step {step!r}")
    sha = row.get("sha256")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise SnapshotError(f"bad checksum at step {step}")
    return SnapshotEntry(
        step=step, tokens_seen=int(row.get("tokens_seen", 0)), train_loss=float(row["train_loss"]),
        heldout_loss=float(row["heldout_loss"]), kind=kind, sha256=sha, file=file if kind == "int8" else None,
    )


def read_index(folder: str | Path) -> SnapshotIndex:
    """Read and check ``<model folder>/snapshots/index.json``.

    Example: read_index("assets/models/classic").steps -> (0, 10, 17, ..., 2000)
    """
    path = Path(folder)
    index_file = path / SNAPSHOT_DIR / INDEX_FILE
    try:
        data = json.loads(index_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotError(f"missing {index_file}; rebuild with `python -m core.training.train --preset <name> --snapshots 12`") from None
    except (OSError, ValueError) as err:
        raise SnapshotError(f"unreadable {index_file} ({err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SnapshotError(f"{index_file}: format is not {FORMAT!r}")
    try:
        entries = tuple(_as_entry(row) for row in data["snapshots"])
        config = GPTConfig.from_dict(data["config"])
        steps = [e.step for e in entries]
        if steps != sorted(set(steps)) or not steps or steps[0] != 0 or entries[0].kind != "init":
            raise SnapshotError("snapshot steps must start at 0 (init) and increase")
        if [e.kind for e in entries].count("final") > 1:
            raise SnapshotError("more than one final snapshot")
        return SnapshotIndex(
            preset=str(data["preset"]), seed=int(data["seed"]), total_steps=int(data["total_steps"]), config=config,
            entries=entries, train_log=tuple(float(v) for v in data.get("train_log", ())),
            heldout_log=tuple((int(s), float(v)) for s, v in data.get("heldout_log", ())), folder=path,
        )
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as err:
        raise SnapshotError(f"{index_file}: {err}") from None


# --- writing -------------------------------------------------------------------------------------


class SnapshotWriter:
    """``train_model``'s ``on_snapshot`` callback: writes int8 files and, at the end, the index.

    Example:
        writer = SnapshotWriter(out / "snapshots", "classic", config, seed=0, total_steps=2000)
        train_model(..., snapshot_steps=writer.steps, on_snapshot=writer)
        writer.finish(train_log=result.train_losses, history=result.history)
    """

    def __init__(self, folder: str | Path, preset: str, config: GPTConfig, seed: int, total_steps: int,
                 steps: Sequence[int]) -> None:
        self.folder = Path(folder)
        self.preset = preset
        self.config = config
        self.seed = seed
        self.total_steps = total_steps
        self.steps = tuple(steps)
        self.rows: list[dict[str, Any]] = []
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.iterdir():  # a retrain replaces the whole set
            if old.is_file() and (_FILE_RE.match(old.name) or old.name == INDEX_FILE):
                old.unlink()

    def __call__(self, step: int, model: GPT, info: Mapping[str, float]) -> None:
        state = _parameters(model)
        row: dict[str, Any] = {
            "step": step, "tokens_seen": int(info["tokens_seen"]),
            "train_loss": round(float(info["train_loss"]), 4), "heldout_loss": round(float(info["heldout_loss"]), 4),
            "sha256": weights_sha256(state),
        }
        if step == 0:
            row |= {"kind": "init", "file": None}
        elif step == self.total_steps:
            row |= {"kind": "final", "file": None}
        else:
            name = f"step_{step:06d}.safetensors"
            save_file(quantize_state(state), str(self.folder / name), metadata={"format": FORMAT})  # one key: the header is byte-stable
            os.chmod(self.folder / name, 0o644)
            row |= {"kind": "int8", "file": name}
        self.rows.append(row)

    def finish(self, train_log: Iterable[float] = (), history: Iterable[Mapping[str, Any]] = ()) -> Path:
        """Write index.json; returns its path."""
        held = {int(r["step"]): float(r["heldout_loss"]) for r in history if math.isfinite(float(r.get("heldout_loss", math.nan)))}
        held |= {r["step"]: r["heldout_loss"] for r in self.rows}
        index = {
            "format": FORMAT, "preset": self.preset, "seed": self.seed, "total_steps": self.total_steps,
            "quantization": QUANT,
            "note": "step 0 is regenerated from the seed (build_model(config, seed)); the final step is ../model.safetensors",
            "config": self.config.to_dict(),
            "snapshots": self.rows,
            "heldout_log": [[s, round(v, 4)] for s, v in sorted(held.items())],
            "train_log": [round(float(v), 4) for v in train_log],
        }
        path = self.folder / INDEX_FILE
        path.write_text(json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return path


# --- loading -------------------------------------------------------------------------------------


def snapshot_name(preset: str, step: int) -> str:
    """The model name a snapshot has in the app's model picker.

    Example: snapshot_name("classic", 241) -> "classic @ step 241"
    """
    return f"{preset} @ step {int(step)}"


def parse_snapshot_name(name: Any) -> tuple[str, int] | None:
    """``(preset, step)`` for a well-formed snapshot name, else None (the step is not checked here).

    Example: parse_snapshot_name("classic @ step 241") -> ("classic", 241)
    """
    if not isinstance(name, str) or len(name) > 64:
        return None
    match = _NAME_RE.match(name)
    if not match:
        return None
    return match["preset"], int(match["step"])


def snapshot_model(index: SnapshotIndex, step: int, final_model: GPT | None = None) -> GPT:
    """The GPT (CPU, eval mode) at ``step`` of an index; checksums are verified for init and final.

    ``final_model`` is the shipped model (only needed for the final step).
    """
    entry = index.entry(step)
    if entry.kind == "init":
        model = build_model(index.config, seed=index.seed, device="cpu")
        if weights_sha256(model) != entry.sha256:
            raise SnapshotError("the regenerated step-0 weights do not match the recorded checksum "
                                "(different torch version?); retrain with `python -m core.training.train`")
        return model.eval()
    if entry.kind == "final":
        if final_model is None:
            raise SnapshotError("the final snapshot is the shipped model; pass it as final_model")
        if weights_sha256(final_model) != entry.sha256:
            raise SnapshotError("the shipped model.safetensors is not the final snapshot of this index; retrain")
        return final_model
    assert index.folder is not None and entry.file is not None
    file = index.folder / SNAPSHOT_DIR / entry.file
    try:
        stored = load_file(str(file))
    except FileNotFoundError:
        raise SnapshotError(f"missing {file}; retrain with `python -m core.training.train`") from None
    except (SafetensorError, OSError, ValueError) as err:
        raise SnapshotError(f"corrupt {file} ({err})") from None
    state = dequantize_state(stored)
    model = build_model(index.config, seed=index.seed, device="cpu")  # leaves the global RNG alone
    expected = _parameters(model)
    if set(state) != set(expected):
        raise SnapshotError(f"{file} does not match the config")
    for name, tensor in state.items():
        if tensor.shape != expected[name].shape or not torch.isfinite(tensor).all():
            raise SnapshotError(f"{file}: {name} has a wrong shape or non-finite values")
    model.load_state_dict(state, strict=False)  # only the tied lm_head is absent
    return model.eval()


def load_snapshot(preset: str, step: int, device: str | None = None, root: str | Path | None = None,
                  shipped: Any = None) -> Any:
    """A built-in model at a training step, as a ``LoadedModel`` named ``"<preset> @ step <s>"``.

    The step must be one of the index's steps; the tokenizer and metrics are the shipped model's.
    ``root`` replaces assets/models (a server or test setting, never a value from a browser).
    ``shipped``: the shipped model of that folder, already loaded (a server's built-in): its
    tokenizer is shared instead of parsed again, and the final step *is* its model (checked
    against the index's checksum), so a snapshot costs only its own weights.
    Example: load_snapshot("classic", 0).model  # the random initialisation
    """
    from dataclasses import replace

    from core import BUILTIN_PRESETS
    from core.engine.checkpoint import ASSETS_MODELS, load_checkpoint

    if preset not in BUILTIN_PRESETS:
        raise SnapshotError(f"unknown built-in model {preset!r}")
    folder = Path(root or ASSETS_MODELS) / preset
    index = read_index(folder)
    entry = index.entry(int(step))
    if shipped is None:
        shipped = load_checkpoint(folder, device="cpu", preset=preset)
    model = snapshot_model(index, entry.step, final_model=shipped.model)
    if model is not shipped.model and model.config != shipped.config:
        raise SnapshotError("the snapshot's config differs from the shipped model's")
    from core.engine import device as devices

    model = model.to(device or devices.pick()).eval()
    metrics = dict(shipped.metrics)
    if entry.kind != "final":  # what training measured belongs to the final weights, not to this step
        metrics = {k: metrics[k] for k in ("trained_token_ids",) if k in metrics}
    metrics["snapshot"] = {"preset": preset, "step": entry.step, "total_steps": index.total_steps}
    return replace(shipped, name=snapshot_name(preset, entry.step), model=model, metrics=metrics)
