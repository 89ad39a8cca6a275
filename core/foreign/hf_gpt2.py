"""Load OpenAI GPT-2 weights saved in Hugging Face format into our ``GPT`` — never downloads.

A Hugging Face GPT-2 folder holds ``config.json`` and ``model.safetensors`` (or shards listed
in ``model.safetensors.index.json``). Our parameter names are GPT-2's own, so the mapping is
one rule: strip the ``transformer.`` prefix. The only twist is that GPT-2's projections are
``Conv1D`` layers storing weights as (in, out), while ``nn.Linear`` stores (out, in): those
four matrices per block are transposed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from core.engine import device as devices
from core.engine.model import GPT, GPTConfig

CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
IGNORED_KEYS = re.compile(r"^h\.\d+\.attn\.(masked_)?bias$")  # causal-mask buffers in old checkpoints
ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Translate a Hugging Face GPT-2 ``config.json`` dict into a ``GPTConfig``.

    Example: config_from_hf({"n_layer": 2, "n_head": 2, "n_embd": 16, "n_positions": 32, "vocab_size": 50}).mlp -> "gelu_tanh"
    """
    model_type = hf.get("model_type", "gpt2")
    if model_type != "gpt2":
        raise ValueError(f"config.json describes a {model_type!r} model; only GPT-2 checkpoints can be loaded")
    activation = hf.get("activation_function", "gelu_new")
    if activation not in ACTIVATIONS:
        raise ValueError(f"unsupported GPT-2 activation {activation!r}; supported: {sorted(ACTIVATIONS)}")
    if not hf.get("scale_attn_weights", True) or hf.get("scale_attn_by_inverse_layer_idx", False):
        raise ValueError("this GPT-2 variant scales attention differently; only the standard 1/sqrt(d_head) is supported")
    try:
        d_model = int(hf["n_embd"])
        return GPTConfig(
            n_layer=int(hf["n_layer"]),
            n_head=int(hf["n_head"]),
            d_model=d_model,
            d_mlp=int(hf.get("n_inner") or 4 * d_model),
            n_ctx=int(hf["n_positions"]),
            vocab_size=int(hf["vocab_size"]),
            positional="learned",
            norm="layernorm",
            mlp=ACTIVATIONS[activation],  # type: ignore[arg-type]
            tie_embeddings=bool(hf.get("tie_word_embeddings", True)),
            bias=True,
            eps=float(hf.get("layer_norm_epsilon", 1e-5)),
        )
    except KeyError as missing:
        raise ValueError(f"config.json lacks the GPT-2 field {missing}") from None


def _read_tensors(folder: Path) -> dict[str, torch.Tensor]:
    single = folder / "model.safetensors"
    index = folder / "model.safetensors.index.json"
    if single.is_file():
        return load_file(str(single))
    if index.is_file():
        shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        tensors: dict[str, torch.Tensor] = {}
        for shard in shards:
            tensors.update(load_file(str(folder / shard)))
        return tensors
    if (folder / "pytorch_model.bin").is_file():
        raise FileNotFoundError(
            f"{folder} has only pytorch_model.bin (pickle, which we never load); save it with safe_serialization=True"
        )
    raise FileNotFoundError(f"no model.safetensors in {folder}")


def load_hf_gpt2(folder: str | Path, device: str | torch.device | None = None) -> GPT:
    """Build our GPT from a local Hugging Face GPT-2 folder (config.json + model.safetensors).

    Example: model = load_hf_gpt2("/models/gpt2")  # a folder on disk; nothing is downloaded
    """
    path = Path(folder)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"no config.json in {path}")
    config = config_from_hf(json.loads(config_file.read_text(encoding="utf-8")))
    raw = _read_tensors(path)

    state: dict[str, torch.Tensor] = {}
    for key, tensor in raw.items():
        name = key.removeprefix("transformer.")
        if IGNORED_KEYS.match(name):
            continue
        if name.endswith(CONV1D_SUFFIXES):
            tensor = tensor.t()  # Conv1D (in, out) -> Linear (out, in)
        state[name] = tensor.float().contiguous()
    if config.tie_embeddings:
        state.pop("lm_head.weight", None)  # the same matrix as wte

    model = GPT(config)
    expected = {k for k in model.state_dict() if not (config.tie_embeddings and k == "lm_head.weight")}
    missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
    if missing or unexpected:
        raise ValueError(f"{path} does not match GPT-2's layout: missing {missing[:5]}, unexpected {unexpected[:5]}")
    for name, param in model.state_dict().items():
        if name in state and tuple(state[name].shape) != tuple(param.shape):
            raise ValueError(f"{name}: checkpoint shape {tuple(state[name].shape)} != expected {tuple(param.shape)}")
    model.load_state_dict(state, strict=False)  # strict=False only because the tied lm_head is implicit
    return model.to(device if device is not None else devices.pick()).eval()
