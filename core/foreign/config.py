"""Reading a Hugging Face ``config.json``: the family it describes, checked numbers, and the
one error type every refusal of a foreign checkpoint uses.

Every refusal is a ``ForeignModelError`` with a ``code`` the UI translates
(``foreign.error.<code>``) and the details as plain parameters; the family files
(``gpt2.py``, ``llama.py``, ...) use the helpers here so a bad field reads the same in each.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch

SUPPORTED_FAMILIES: tuple[str, ...] = ("gpt2", "llama", "qwen2", "mistral")
ARCHITECTURES = {
    "GPT2LMHeadModel": "gpt2",
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "MistralForCausalLM": "mistral",
}
MAX_CONTEXT = 4096  # positions a page may use; traces keep head x pos x pos per layer


class ForeignModelError(Exception):
    """A model folder that cannot be served; ``code`` selects the translated message.

    codes: missing_folder, missing_config, bad_config, unsupported, unsupported_feature,
    bin_only, no_weights, bad_weights, no_tokenizer, bad_tokenizer, too_big
    """

    def __init__(self, code: str, detail: str, **params: Any) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.params = {k: str(v) for k, v in params.items()}


def read_config(folder: Path) -> dict[str, Any]:
    """``config.json`` as a dict, or a ForeignModelError saying what is wrong with it."""
    if not folder.is_dir():
        raise ForeignModelError("missing_folder", f"{folder} is not a folder", folder=folder)
    path = folder / "config.json"
    if not path.is_file():
        raise ForeignModelError("missing_config", f"no config.json in {folder}", folder=folder)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ForeignModelError("bad_config", f"{path} is not valid JSON ({err})", folder=folder, reason=err) from None
    if not isinstance(data, dict):
        raise ForeignModelError("bad_config", f"{path} is not a JSON object", folder=folder, reason="not an object")
    return data


def detect_family(hf: dict[str, Any]) -> str:
    """The supported family of a config, or ForeignModelError("unsupported").

    Example: detect_family({"model_type": "qwen2"}) -> "qwen2"
    """
    model_type = hf.get("model_type")
    if model_type in SUPPORTED_FAMILIES:
        return str(model_type)
    for arch in hf.get("architectures") or []:
        if arch in ARCHITECTURES and model_type is None:
            return ARCHITECTURES[arch]
    shown = model_type if model_type is not None else ",".join(map(str, hf.get("architectures") or [])) or "?"
    raise ForeignModelError(
        "unsupported",
        f"not supported yet: {shown}; supported: {', '.join(SUPPORTED_FAMILIES)}",
        model_type=shown,
        supported=", ".join(SUPPORTED_FAMILIES),
    )


def positive_int(hf: dict[str, Any], key: str, default: Any = None) -> int:
    """``hf[key]`` as a positive whole number (``default`` when absent), or ForeignModelError("bad_config").

    Example: positive_int({"n_layer": 12}, "n_layer") -> 12
    """
    value = hf.get(key, default)
    if value is None:
        raise ForeignModelError("bad_config", f"config.json lacks {key!r}", reason=f"missing {key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value <= 0:
        raise ForeignModelError("bad_config", f"config.json: {key} = {value!r} is not a positive whole number",
                                reason=f"{key} = {value!r}")
    return int(value)


def finite_float(hf: dict[str, Any], key: str, default: float) -> float:
    """``hf[key]`` as a finite number (``default`` when absent or null), or ForeignModelError("bad_config").

    Example: finite_float({}, "rms_norm_eps", 1e-6) -> 1e-06
    """
    value = hf.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ForeignModelError("bad_config", f"config.json: {key} = {value!r} is not a number", reason=f"{key} = {value!r}")
    return float(value)


def unsupported(feature: str, value: Any) -> ForeignModelError:
    """The refusal for a config field our model cannot reproduce (raise it).

    Example: raise unsupported("hidden_act", "relu")
    """
    return ForeignModelError("unsupported_feature", f"this checkpoint uses {feature} = {value!r}, which is not supported yet",
                             feature=feature, value=value)


def checkpoint_dtype(hf: dict[str, Any]) -> str:
    """The dtype the checkpoint was saved in ("float32", "float16", "bfloat16").

    Example: checkpoint_dtype({"torch_dtype": "bfloat16"}) -> "bfloat16"
    """
    value = hf.get("dtype", hf.get("torch_dtype", "float32"))
    return value if value in ("float32", "float16", "bfloat16") else "float32"


def run_dtype(hf: dict[str, Any], device: str) -> torch.dtype:
    """float16/bfloat16 on CUDA when the checkpoint is; float32 everywhere else.

    Example: run_dtype({"torch_dtype": "float16"}, "cpu") -> torch.float32
    """
    saved = checkpoint_dtype(hf)
    if device.startswith("cuda") and saved in ("float16", "bfloat16"):
        return getattr(torch, saved)
    return torch.float32
