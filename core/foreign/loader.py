"""Load a teacher's local Hugging Face checkpoint into our own ``GPT`` — never downloads.

One path for every family: read ``config.json`` -> the family's ``config_from_hf`` -> check the
memory -> read the safetensors -> the family's ``convert_weights`` -> ``build_from_state``.

Safety: only ``*.safetensors`` files are read (a pickle ``.bin`` is never opened), no code from
the folder ever runs (there is no ``trust_remote_code``), and the memory the model needs is
estimated from ``config.json`` and checked against free RAM (CPU) or VRAM (CUDA) before a
single weight is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from core.engine import device as devices
from core.engine.model import GPT, GPTConfig, rope_frequencies, sinusoidal_table, state_mismatch
from core.foreign import gpt2, llama, mistral, qwen2
from core.foreign.config import ForeignModelError, checkpoint_dtype, detect_family, read_config, run_dtype
from core.foreign.memory import MemoryEstimate, estimate_memory, meta_model

# family -> its module: config_from_hf(hf) -> GPTConfig, convert_weights(raw, config) -> our state dict
FAMILIES: dict[str, ModuleType] = {"gpt2": gpt2, "llama": llama, "qwen2": qwen2, "mistral": mistral}


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Translate a supported Hugging Face ``config.json`` into our ``GPTConfig``.

    Example: config_from_hf({"model_type": "qwen2", "hidden_size": 64, ...}).qkv_bias -> True
    """
    family = detect_family(hf)
    try:
        return FAMILIES[family].config_from_hf(hf)
    except ValueError as err:  # GPTConfig's own checks (a head count that does not divide, ...)
        raise ForeignModelError("bad_config", f"config.json describes an impossible model ({err})", reason=err) from None


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files of a folder; a pickle-only folder is refused with how to convert it."""
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise ForeignModelError("bad_weights", f"unreadable {index} ({err})", folder=folder, reason=err) from None
        files = []
        for shard in shards:
            path = folder / str(shard)
            if path.parent != folder or path.suffix != ".safetensors" or not path.is_file():
                raise ForeignModelError("bad_weights", f"{index} names a missing or foreign shard {shard!r}",
                                        folder=folder, reason=f"shard {shard}")
            files.append(path)
        return files
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    found = sorted(folder.glob("*.safetensors"))
    if found:
        return found
    if any(folder.glob("*.bin")) or any(folder.glob("*.pt")) or any(folder.glob("*.pth")):
        raise ForeignModelError("bin_only", f"{folder} has only pickle weights (.bin), which are never loaded", folder=folder)
    raise ForeignModelError("no_weights", f"no model.safetensors in {folder}", folder=folder)


def read_tensors(files: list[Path], dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Every tensor of the safetensors files, floating-point ones cast to ``dtype``."""
    from safetensors import SafetensorError, safe_open

    tensors: dict[str, torch.Tensor] = {}
    for path in files:
        try:
            with safe_open(str(path), framework="pt") as handle:
                for key in handle.keys():
                    tensor = handle.get_tensor(key)
                    tensors[key] = tensor.to(dtype) if tensor.is_floating_point() else tensor
        except (SafetensorError, OSError, ValueError, RuntimeError) as err:
            raise ForeignModelError("bad_weights", f"unreadable {path.name} ({err})", reason=f"{path.name}: {err}") from None
    return tensors


def _rebuild_buffers(model: GPT) -> None:
    """Non-persistent buffers (RoPE frequencies, sin/cos table) made again on a real device."""
    cfg = model.config
    if cfg.positional == "rope":
        inv_freq = rope_frequencies(cfg)
        for block in model.h:
            block.attn.register_buffer("rope_inv_freq", inv_freq.clone(), persistent=False)
    elif cfg.positional == "sinusoidal":
        model.register_buffer("sinusoid", sinusoidal_table(cfg.n_ctx, cfg.d_model), persistent=False)


def build_from_state(config: GPTConfig, state: dict[str, torch.Tensor], where: str, skeleton: GPT | None = None) -> GPT:
    """Our GPT with these weights, made without a random initialisation (meta device + assign)."""
    if config.tie_embeddings:
        state.pop("lm_head.weight", None)
    model = skeleton if skeleton is not None else meta_model(config)
    mismatch = state_mismatch(model, state)
    missing, unexpected = mismatch.missing, mismatch.unexpected
    if missing or unexpected:
        raise ForeignModelError("bad_weights", f"{where}: missing {missing[:5]}, unexpected {unexpected[:5]}",
                                reason=f"missing {missing[:3]}, unexpected {unexpected[:3]}")
    if mismatch.wrong_shape:
        name, got, want = mismatch.wrong_shape
        raise ForeignModelError("bad_weights", f"{name}: shape {got} != {want}", reason=f"{name} {got} != {want}")
    # No copies: a transposed GPT-2 Conv1D weight stays a view (nn.Linear reads it as fast either way).
    model.load_state_dict(state, strict=False, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.wte.weight
    _rebuild_buffers(model)
    return model


@dataclass(frozen=True)
class _Plan:
    """Everything decided from config.json before a weight is read."""

    path: Path
    hf: dict[str, Any]
    family: str
    config: GPTConfig
    files: list[Path]
    device: str
    dtype: torch.dtype
    skeleton: GPT
    estimate: MemoryEstimate


def _plan(path: Path, device: str | None, memory_limit_mb: float | None, need_tokenizer: bool) -> _Plan:
    hf = read_config(path)
    config = config_from_hf(hf)
    files = weight_files(path)
    if need_tokenizer and not (path / "tokenizer.json").is_file():
        raise ForeignModelError("no_tokenizer", f"no tokenizer.json in {path}", folder=path)
    target = device or devices.pick()
    dtype = run_dtype(hf, target)
    skeleton = meta_model(config)
    estimate = estimate_memory(config, dtype, target, skeleton, memory_limit_mb)
    if not estimate.fits:
        raise ForeignModelError(
            "too_big",
            f"{path.name} needs about {estimate.needed_bytes / 1e9:.1f} GB ({estimate.n_params:,} parameters as "
            f"{estimate.dtype}); {(estimate.available_bytes or 0) / 1e9:.1f} GB is free on {target}",
            needed=f"{estimate.needed_bytes / 1e9:.1f}", free=f"{(estimate.available_bytes or 0) / 1e9:.1f}",
            params=f"{estimate.n_params:,}", device=target,
        )
    return _Plan(path, hf, detect_family(hf), config, files, target, dtype, skeleton, estimate)


def _build(plan: _Plan) -> GPT:
    raw = read_tensors(plan.files, plan.dtype)
    state = FAMILIES[plan.family].convert_weights(raw, plan.config)
    del raw
    return build_from_state(plan.config, state, str(plan.path), plan.skeleton).to(plan.device).eval()


def load_hf_weights(folder: str | Path, device: str | None = None, memory_limit_mb: float | None = None) -> GPT:
    """Only the model (no tokenizer) from a local Hugging Face folder, or a ForeignModelError.

    Example: model = load_hf_weights("/models/gpt2", device="cpu"); model.run_with_trace([464, 3290])
    """
    return _build(_plan(Path(folder), device, memory_limit_mb, need_tokenizer=False))


def load_hf_model(folder: str | Path, device: str | None = None, name: str | None = None,
                  memory_limit_mb: float | None = None) -> Any:
    """A ``core.engine.checkpoint.LoadedModel`` from a local Hugging Face folder, or a ForeignModelError.

    ``memory_limit_mb`` replaces the free memory the device reports (the server's settings pass it).

    Example: loaded = load_hf_model("/models/Qwen2.5-0.5B"); loaded.model.run_with_trace(loaded.tokenizer.encode("hi"))
    """
    from core.engine.checkpoint import LoadedModel
    from core.text.hf_tokenizer import HFTokenizer

    plan = _plan(Path(folder), device, memory_limit_mb, need_tokenizer=True)
    model = _build(plan)
    path, hf, config = plan.path, plan.hf, plan.config
    eos = hf.get("eos_token_id")
    if isinstance(eos, list):
        eos = eos[0] if eos else None
    try:
        tokenizer = HFTokenizer.from_folder(path, model_vocab_size=config.vocab_size,
                                            eos_token_id=eos if isinstance(eos, int) else None)
    except Exception as err:  # the Rust library reports any malformed file as a plain Exception
        raise ForeignModelError("bad_tokenizer", f"unreadable tokenizer.json in {path} ({err})",
                                folder=path, reason=err) from None
    if tokenizer.vocab_size > config.vocab_size:
        raise ForeignModelError("bad_tokenizer", f"tokenizer has {tokenizer.vocab_size} tokens, the model {config.vocab_size}",
                                folder=path, reason=f"{tokenizer.vocab_size} > {config.vocab_size} tokens")
    metrics = {"family": plan.family, "checkpoint_dtype": checkpoint_dtype(hf),
               "run_dtype": str(plan.dtype).removeprefix("torch."), "n_params": plan.estimate.n_params, "foreign": True}
    return LoadedModel(name=name or path.name, model=model, tokenizer=tokenizer, config=config, metrics=metrics, folder=path)
