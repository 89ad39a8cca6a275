"""Saving and loading our checkpoints (safetensors only, never pickle).

A checkpoint folder, e.g. ``assets/models/classic/``, holds:
    model.safetensors   the weights; a tied lm_head is not stored twice (it *is* wte)
    config.json         {"format": ..., "config": GPTConfig fields, "preset": name}
    tokenizer files     written by the tokenizer's own ``save`` (incl. Hugging Face tokenizer.json)
    metrics.json        what training measured (parameters, steps, time, losses, probe accuracies)

Hugging Face checkpoints (GPT-2, Llama, Qwen2, Mistral) load through ``core.foreign``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from core.engine import device as devices
from core.engine.model import GPT, INIT_LOCK, GPTConfig, state_mismatch
from core.engine.presets import ASSETS_MODELS, BUILTIN_PRESETS

__all__ = [
    "ASSETS_MODELS",
    "CheckpointCorruptError",
    "CheckpointError",
    "CheckpointMissingError",
    "LoadedModel",
    "load_builtin",
    "load_checkpoint",
    "save_checkpoint",
]

FORMAT = "token-journey-gpt/1"
WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.json"
TOKENIZER_FILE = "bpe.json"  # what core.text.tokenizer.BPETokenizer.load reads


class CheckpointError(Exception):
    """A checkpoint could not be loaded; the message names the file and how to rebuild it.

    ``path`` is the file (or folder) at fault and ``preset`` the preset that rebuilds it, so a
    page can write its own translated message instead of this English one.
    """

    def __init__(self, message: str, *, path: Path | None = None, preset: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.preset = preset


class CheckpointMissingError(CheckpointError, FileNotFoundError):
    """A file of the checkpoint does not exist."""


class CheckpointCorruptError(CheckpointError, ValueError):
    """A file exists but cannot be read or does not match the config."""


@dataclass(frozen=True)
class LoadedModel:
    """A ready-to-use model: eval mode, on ``device.pick()``, with its tokenizer and metrics."""

    name: str
    model: GPT
    tokenizer: Any  # core.text.tokenizer.BPETokenizer
    config: GPTConfig
    metrics: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None

    @property
    def device(self) -> str:
        return str(self.model.device)


def _retrain_hint(preset: str | None) -> str:
    if preset:
        return f"rebuild it with `python -m core.training.train --preset {preset}`"
    return "rebuild it with `python -m core.training.train --preset <name>`"


def save_checkpoint(
    model: GPT,
    folder: str | Path,
    tokenizer: Any | None = None,
    metrics: dict[str, Any] | None = None,
    preset: str | None = None,
) -> Path:
    """Write weights, config, tokenizer and metrics into ``folder`` (created if needed).

    Example: save_checkpoint(model, "assets/models/classic", tokenizer, metrics, preset="classic")
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    state = {name: t.detach().cpu().contiguous() for name, t in model.state_dict().items()}
    if model.config.tie_embeddings:
        state.pop("lm_head.weight")  # the same tensor as wte.weight: stored once
    save_file(state, str(path / WEIGHTS_FILE), metadata={"format": FORMAT})
    os.chmod(path / WEIGHTS_FILE, 0o644)  # safetensors writes owner-only; a shipped asset is world-readable
    config = {"format": FORMAT, "preset": preset, "config": model.config.to_dict()}
    (path / CONFIG_FILE).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if tokenizer is not None:
        tokenizer.save(path)
    if metrics is not None:
        (path / METRICS_FILE).write_text(json.dumps(metrics, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _read_config(path: Path, hint: str) -> tuple[GPTConfig, str | None]:
    config_file = path / CONFIG_FILE
    if not config_file.is_file():
        raise CheckpointMissingError(f"missing {config_file}; {hint}", path=config_file)
    try:
        data = json.loads(config_file.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r} is not {FORMAT!r}")
        return GPTConfig.from_dict(data["config"]), data.get("preset")
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise CheckpointCorruptError(f"unreadable {config_file} ({err}); {hint}", path=config_file) from None


def load_checkpoint(folder: str | Path, device: str | None = None, preset: str | None = None) -> LoadedModel:
    """Load one of our checkpoint folders.

    Example: loaded = load_checkpoint("assets/models/modern"); loaded.model.run_with_trace([1, 2])
    """
    path = Path(folder)
    hint = _retrain_hint(preset)
    try:
        config, saved_preset = _read_config(path, hint)
    except CheckpointError as err:
        err.preset = preset
        raise
    hint = _retrain_hint(preset or saved_preset)
    rebuild = preset or saved_preset

    weights_file = path / WEIGHTS_FILE
    if not weights_file.is_file():
        raise CheckpointMissingError(f"missing {weights_file}; {hint}", path=weights_file, preset=rebuild)
    try:
        state = load_file(str(weights_file))
    except (SafetensorError, OSError, ValueError) as err:
        raise CheckpointCorruptError(f"corrupt {weights_file} ({err}); {hint}", path=weights_file,
                                     preset=rebuild) from None

    with INIT_LOCK:  # its random initialisation must not interleave with a seeded build_model elsewhere
        model = GPT(config)
    mismatch = state_mismatch(model, state)
    if mismatch.missing or mismatch.unexpected:
        raise CheckpointCorruptError(
            f"{weights_file} does not match {path / CONFIG_FILE}: missing {mismatch.missing[:5]}, "
            f"unexpected {mismatch.unexpected[:5]}; {hint}",
            path=weights_file, preset=rebuild,
        )
    if mismatch.wrong_shape:
        name, got, want = mismatch.wrong_shape
        raise CheckpointCorruptError(f"{weights_file}: {name} has shape {got}, config expects {want}; {hint}",
                                     path=weights_file, preset=rebuild)
    model.load_state_dict(state, strict=False)  # only the tied lm_head is absent, checked above
    for name, tensor in model.state_dict().items():
        if not torch.isfinite(tensor).all():
            raise CheckpointCorruptError(f"{weights_file}: {name} contains NaN or infinity; {hint}",
                                         path=weights_file, preset=rebuild)
    model = model.to(device or devices.pick()).eval()

    try:
        tokenizer = _load_tokenizer(path, hint)
    except CheckpointError as err:
        err.preset = rebuild
        raise
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointCorruptError(
            f"tokenizer in {path} has {tokenizer.vocab_size} tokens, the model expects {config.vocab_size}; {hint}",
            path=path / TOKENIZER_FILE, preset=rebuild,
        )
    metrics = _read_metrics(path / METRICS_FILE)
    name = preset or saved_preset or path.name
    return LoadedModel(name=name, model=model, tokenizer=tokenizer, config=config, metrics=metrics, folder=path)


def _read_metrics(metrics_file: Path) -> dict[str, Any]:
    """What training measured. Optional: a missing or unreadable file means no metrics, not no model."""
    try:
        metrics = json.loads(metrics_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, unreadable, not UTF-8 or not JSON
        return {}
    return metrics if isinstance(metrics, dict) else {}


def _load_tokenizer(path: Path, hint: str) -> Any:
    """The tokenizer saved next to the weights (``core.text.tokenizer.BPETokenizer``).

    ``BPETokenizer.load`` reads ``bpe.json``, so that is the file required here; the other
    tokenizer files (``tokenizer.json`` for Hugging Face, ``vocab.txt``, ``merges.txt``) are
    for people and other libraries, and may be absent.
    """
    from core.text.tokenizer import BPETokenizer  # imported late: ``import core.engine.checkpoint`` stays light

    tokenizer_file = path / TOKENIZER_FILE
    if not tokenizer_file.is_file():
        raise CheckpointMissingError(f"missing {tokenizer_file}; {hint}", path=tokenizer_file)
    try:
        return BPETokenizer.load(path)
    except FileNotFoundError as err:
        raise CheckpointMissingError(f"missing tokenizer file in {path} ({err}); {hint}", path=tokenizer_file) from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as err:  # JSON errors are ValueErrors
        raise CheckpointCorruptError(f"unreadable tokenizer in {path} ({err}); {hint}", path=tokenizer_file) from None


def load_builtin(name: str, device: str | None = None) -> LoadedModel:
    """One of the shipped presets from ``assets/models/<name>/`` ("classic" or "modern").

    Example: core.load_builtin("classic").model.run_with_trace(ids)
    """
    if name not in BUILTIN_PRESETS:
        raise ValueError(f"unknown built-in model {name!r}; choose one of {list(BUILTIN_PRESETS)}")
    return load_checkpoint(ASSETS_MODELS / name, device=device, preset=name)
