"""Load a teacher's local Hugging Face checkpoint into our own ``GPT`` — never downloads.

Families (detected from ``config.json``'s ``model_type``, else its ``architectures``):

    gpt2      GPT-2 (and DistilGPT-2): learned positions, LayerNorm, tanh-GELU, Conv1D weights
    llama     Llama 2 / 3 / 3.x, TinyLlama, SmolLM: RoPE, RMSNorm, SwiGLU, grouped-query attention
    qwen2     Qwen2 / Qwen2.5: Llama's design plus biases on q, k and v
    mistral   Mistral: Llama's design (sliding window: we keep n_ctx within the window)

Everything else is refused with ``ForeignModelError`` (code ``unsupported``) naming the model
type and the supported families. Every refusal is a ``ForeignModelError`` with a ``code`` the UI
translates (``foreign.error.<code>``) and the details as plain parameters.

Safety: only ``*.safetensors`` files are read (a pickle ``.bin`` is never opened), no code from
the folder ever runs (there is no ``trust_remote_code``), and the memory the model needs is
estimated from ``config.json`` and checked against free RAM (CPU) or VRAM (CUDA) before a
single weight is read.

RoPE convention. Hugging Face's Llama rotates dimension j of a head together with dimension
j + d_head/2 ("rotate half"); our ``core.engine.model.apply_rope`` rotates neighbours (2i, 2i+1), as
the RoFormer paper writes it. Both use frequency theta_i for pair i. Permuting the rows of
W_q and W_k within every head (our 2i <- their i, our 2i+1 <- their i + d_head/2) makes the
two identical: q·k is unchanged by permuting both, so scores, patterns and logits match; only
the order of the d_head coordinates inside ``hook_q``/``hook_k`` differs from Hugging Face's.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from core.engine import device as devices
from core.engine.model import GPT, GPTConfig

SUPPORTED_FAMILIES: tuple[str, ...] = ("gpt2", "llama", "qwen2", "mistral")
ARCHITECTURES = {
    "GPT2LMHeadModel": "gpt2",
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "MistralForCausalLM": "mistral",
}
MAX_CONTEXT = 4096  # positions a page may use; traces keep head x pos x pos per layer
MEMORY_HEADROOM = 1.15  # activations, the tokenizer and the Python process on top of the weights
GPT2_ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}


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


# --- config -------------------------------------------------------------------------------


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


def _int(hf: dict[str, Any], key: str, default: Any = None) -> int:
    value = hf.get(key, default)
    if value is None:
        raise ForeignModelError("bad_config", f"config.json lacks {key!r}", reason=f"missing {key}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value <= 0:
        raise ForeignModelError("bad_config", f"config.json: {key} = {value!r} is not a positive whole number",
                                reason=f"{key} = {value!r}")
    return int(value)


def _float(hf: dict[str, Any], key: str, default: float) -> float:
    value = hf.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ForeignModelError("bad_config", f"config.json: {key} = {value!r} is not a number", reason=f"{key} = {value!r}")
    return float(value)


def _unsupported(feature: str, value: Any) -> ForeignModelError:
    return ForeignModelError("unsupported_feature", f"this checkpoint uses {feature} = {value!r}, which is not supported yet",
                             feature=feature, value=value)


def _rope(hf: dict[str, Any]) -> tuple[float, tuple[float, float, float, int] | None]:
    """(rope_theta, llama3 scaling or None) from either the old or the transformers-5 layout."""
    params = hf.get("rope_parameters")
    scaling = hf.get("rope_scaling")
    if isinstance(params, dict):
        theta = params.get("rope_theta", hf.get("rope_theta", 10000.0))
        scaling = params
    else:
        theta = hf.get("rope_theta", 10000.0)
    theta = _float({"rope_theta": theta}, "rope_theta", 10000.0)
    if not isinstance(scaling, dict):
        if scaling is not None:
            raise _unsupported("rope_scaling", scaling)
        return theta, None
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind in (None, "default"):
        return theta, None
    if kind == "llama3":
        try:
            values = (float(scaling["factor"]), float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"]),
                      int(scaling["original_max_position_embeddings"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ForeignModelError("bad_config", f"incomplete llama3 rope_scaling ({err})", reason=f"rope_scaling {err}") from None
        return theta, values
    raise _unsupported("rope_scaling.rope_type", kind)


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Translate a supported Hugging Face ``config.json`` into our ``GPTConfig``.

    Example: config_from_hf({"model_type": "qwen2", "hidden_size": 64, ...}).qkv_bias -> True
    """
    family = detect_family(hf)
    try:
        return _gpt2_config(hf) if family == "gpt2" else _llama_config(hf, family)
    except ValueError as err:  # GPTConfig's own checks (a head count that does not divide, ...)
        raise ForeignModelError("bad_config", f"config.json describes an impossible model ({err})", reason=err) from None


def _gpt2_config(hf: dict[str, Any]) -> GPTConfig:
    activation = hf.get("activation_function", "gelu_new")
    if activation not in GPT2_ACTIVATIONS:
        raise _unsupported("activation_function", activation)
    if not hf.get("scale_attn_weights", True) or hf.get("scale_attn_by_inverse_layer_idx", False) \
            or hf.get("reorder_and_upcast_attn", False):
        raise _unsupported("attention scaling", "non-standard")
    d_model = _int(hf, "n_embd")
    return GPTConfig(
        n_layer=_int(hf, "n_layer"),
        n_head=_int(hf, "n_head"),
        d_model=d_model,
        d_mlp=_int({"n_inner": hf.get("n_inner") or 4 * d_model}, "n_inner"),
        n_ctx=min(_int(hf, "n_positions"), MAX_CONTEXT),
        vocab_size=_int(hf, "vocab_size"),
        positional="learned",
        norm="layernorm",
        mlp=GPT2_ACTIVATIONS[activation],  # type: ignore[arg-type]
        tie_embeddings=bool(hf.get("tie_word_embeddings", True)),
        bias=True,
        eps=_float(hf, "layer_norm_epsilon", 1e-5),
    )


def _llama_config(hf: dict[str, Any], family: str) -> GPTConfig:
    d_model = _int(hf, "hidden_size")
    n_head = _int(hf, "num_attention_heads")
    n_kv_head = _int({"num_key_value_heads": hf.get("num_key_value_heads") or n_head}, "num_key_value_heads")
    head_dim = hf.get("head_dim")
    if head_dim is not None and head_dim * n_head != d_model:
        raise _unsupported("head_dim", head_dim)
    activation = hf.get("hidden_act", "silu")
    if activation != "silu":
        raise _unsupported("hidden_act", activation)
    if hf.get("pretraining_tp", 1) not in (None, 1):
        raise _unsupported("pretraining_tp", hf.get("pretraining_tp"))
    if family == "qwen2":
        bias, qkv_bias = False, True
    else:
        attention_bias, mlp_bias = bool(hf.get("attention_bias", False)), bool(hf.get("mlp_bias", False))
        if attention_bias != mlp_bias:
            raise _unsupported("attention_bias / mlp_bias", f"{attention_bias} / {mlp_bias}")
        bias = qkv_bias = attention_bias
    n_ctx = _int(hf, "max_position_embeddings", 2048)
    window = hf.get("sliding_window")
    uses_window = family == "mistral" or bool(hf.get("use_sliding_window", False))
    if uses_window and isinstance(window, int) and not isinstance(window, bool) and window > 0:
        n_ctx = min(n_ctx, window)  # inside the window, sliding-window attention is plain causal attention
    theta, llama3 = _rope(hf)
    default_tie = False
    return GPTConfig(
        n_layer=_int(hf, "num_hidden_layers"),
        n_head=n_head,
        n_kv_head=n_kv_head,
        d_model=d_model,
        d_mlp=_int(hf, "intermediate_size"),
        n_ctx=min(n_ctx, MAX_CONTEXT),
        vocab_size=_int(hf, "vocab_size"),
        positional="rope",
        rope_base=theta,
        rope_llama3=llama3,
        norm="rmsnorm",
        mlp="swiglu",
        tie_embeddings=bool(hf.get("tie_word_embeddings", default_tie)),
        bias=bias,
        qkv_bias=qkv_bias,
        eps=_float(hf, "rms_norm_eps", 1e-6),
    )


def checkpoint_dtype(hf: dict[str, Any]) -> str:
    """The dtype the checkpoint was saved in ("float32", "float16", "bfloat16")."""
    value = hf.get("dtype", hf.get("torch_dtype", "float32"))
    return value if value in ("float32", "float16", "bfloat16") else "float32"


def run_dtype(hf: dict[str, Any], device: str) -> torch.dtype:
    """float16/bfloat16 on CUDA when the checkpoint is; float32 everywhere else."""
    saved = checkpoint_dtype(hf)
    if device.startswith("cuda") and saved in ("float16", "bfloat16"):
        return getattr(torch, saved)
    return torch.float32


# --- memory ------------------------------------------------------------------------------


def meta_model(config: GPTConfig) -> GPT:
    """Our model's structure with no storage at all (device "meta"): for counting and for loading into."""
    with torch.device("meta"):
        return GPT(config)


def parameter_count(config: GPTConfig, skeleton: GPT | None = None) -> int:
    """Parameters of our model for this config, counted without allocating a single weight."""
    return (skeleton if skeleton is not None else meta_model(config)).num_params()


def available_memory(device: str) -> int | None:
    """Bytes free for a new model: VRAM on CUDA, MemAvailable from /proc/meminfo on CPU (None if unknown)."""
    forced = os.environ.get("TOKEN_JOURNEY_MEMORY_LIMIT_MB", "").strip()
    if forced:
        try:
            return int(float(forced) * 1e6)
        except ValueError:
            pass
    if device.startswith("cuda"):
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class MemoryEstimate:
    """What loading a checkpoint will take, decided from config.json alone."""

    n_params: int
    dtype: str  # what the weights become in memory
    needed_bytes: int
    available_bytes: int | None

    @property
    def fits(self) -> bool:
        return self.available_bytes is None or self.needed_bytes <= self.available_bytes


def estimate_memory(config: GPTConfig, dtype: torch.dtype, device: str, skeleton: GPT | None = None) -> MemoryEstimate:
    """Weights at ``dtype`` plus headroom, against what the device has free now."""
    n_params = parameter_count(config, skeleton)
    width = torch.empty((), dtype=dtype).element_size()
    needed = int(n_params * width * MEMORY_HEADROOM)
    return MemoryEstimate(n_params, str(dtype).removeprefix("torch."), needed, available_memory(device))


# --- weights -----------------------------------------------------------------------------


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


def _rope_permutation(d_head: int) -> torch.Tensor:
    """Row order that turns Hugging Face's rotate-half layout into our neighbour pairs."""
    half = d_head // 2
    return torch.stack((torch.arange(half), torch.arange(half) + half), dim=1).reshape(-1)  # [0, h, 1, h+1, ...]


def _permute_heads(tensor: torch.Tensor, n_heads: int, d_head: int) -> torch.Tensor:
    """Apply the RoPE row permutation inside every head of a q/k weight (out, in) or bias (out,)."""
    perm = _rope_permutation(d_head)
    shaped = tensor.reshape(n_heads, d_head, *tensor.shape[1:])
    return shaped[:, perm].reshape(tensor.shape)


def _gpt2_state(raw: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    conv1d = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
    state = {}
    for key, tensor in raw.items():
        name = key.removeprefix("transformer.")
        if name.endswith((".attn.bias", ".attn.masked_bias")):
            continue  # causal-mask buffers of old checkpoints
        state[name] = tensor.t() if name.endswith(conv1d) else tensor  # Conv1D (in, out) -> Linear (out, in)
    return state


def _llama_state(raw: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    simple = {
        "model.embed_tokens.weight": "wte.weight",
        "model.norm.weight": "ln_f.weight",
        "lm_head.weight": "lm_head.weight",
    }
    per_layer = {
        "input_layernorm.weight": "ln_1.weight",
        "post_attention_layernorm.weight": "ln_2.weight",
        "self_attn.o_proj.weight": "attn.c_proj.weight",
        "self_attn.o_proj.bias": "attn.c_proj.bias",
        "mlp.gate_proj.weight": "mlp.c_gate.weight",
        "mlp.gate_proj.bias": "mlp.c_gate.bias",
        "mlp.up_proj.weight": "mlp.c_fc.weight",
        "mlp.up_proj.bias": "mlp.c_fc.bias",
        "mlp.down_proj.weight": "mlp.c_proj.weight",
        "mlp.down_proj.bias": "mlp.c_proj.bias",
    }
    state: dict[str, torch.Tensor] = {}
    qkv: dict[tuple[int, str], dict[str, torch.Tensor]] = {}
    unknown = []
    for key, tensor in raw.items():
        if key in simple:
            state[simple[key]] = tensor
            continue
        parts = key.split(".", 3)  # model, layers, i, rest
        if len(parts) == 4 and parts[0] == "model" and parts[1] == "layers" and parts[2].isdigit():
            layer, rest = int(parts[2]), parts[3]
            if rest in per_layer:
                state[f"h.{layer}.{per_layer[rest]}"] = tensor
                continue
            if rest.startswith("self_attn.") and rest.count(".") == 2:
                proj, kind = rest.split(".")[1:]
                if proj in ("q_proj", "k_proj", "v_proj") and kind in ("weight", "bias"):
                    qkv.setdefault((layer, kind), {})[proj] = tensor
                    continue
            if rest.endswith("rotary_emb.inv_freq"):
                continue  # recomputed from rope_theta
        unknown.append(key)
    if unknown:
        raise ForeignModelError("bad_weights", f"unexpected tensors {unknown[:5]}", reason=f"unexpected {unknown[:3]}")
    d_head = config.d_head
    for (layer, kind), parts in qkv.items():
        if set(parts) != {"q_proj", "k_proj", "v_proj"}:
            raise ForeignModelError("bad_weights", f"layer {layer}: q/k/v {kind} incomplete", reason=f"layer {layer} q/k/v")
        q = _permute_heads(parts["q_proj"], config.n_head, d_head)
        k = _permute_heads(parts["k_proj"], config.n_kv_head, d_head)
        state[f"h.{layer}.attn.c_attn.{kind}"] = torch.cat((q, k, parts["v_proj"]), dim=0)
    return state


def _read_tensors(files: list[Path], dtype: torch.dtype) -> dict[str, torch.Tensor]:
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
    from core.engine.model import llama3_scaled_frequencies, rope_inverse_frequencies, sinusoidal_table

    cfg = model.config
    if cfg.positional == "rope":
        inv_freq = rope_inverse_frequencies(cfg.d_head, cfg.rope_base)
        if cfg.rope_llama3 is not None:
            inv_freq = llama3_scaled_frequencies(inv_freq, cfg.rope_llama3)
        for block in model.h:
            block.attn.register_buffer("rope_inv_freq", inv_freq.clone(), persistent=False)
    elif cfg.positional == "sinusoidal":
        model.register_buffer("sinusoid", sinusoidal_table(cfg.n_ctx, cfg.d_model), persistent=False)


def build_from_state(config: GPTConfig, state: dict[str, torch.Tensor], where: str, skeleton: GPT | None = None) -> GPT:
    """Our GPT with these weights, made without a random initialisation (meta device + assign)."""
    if config.tie_embeddings:
        state.pop("lm_head.weight", None)
    model = skeleton if skeleton is not None else meta_model(config)
    expected = {k for k in model.state_dict() if not (config.tie_embeddings and k == "lm_head.weight")}
    missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
    if missing or unexpected:
        raise ForeignModelError("bad_weights", f"{where}: missing {missing[:5]}, unexpected {unexpected[:5]}",
                                reason=f"missing {missing[:3]}, unexpected {unexpected[:3]}")
    for name, param in model.state_dict().items():
        if name in state and tuple(state[name].shape) != tuple(param.shape):
            raise ForeignModelError("bad_weights", f"{name}: shape {tuple(state[name].shape)} != {tuple(param.shape)}",
                                    reason=f"{name} {tuple(state[name].shape)} != {tuple(param.shape)}")
    # No copies: a transposed GPT-2 Conv1D weight stays a view (nn.Linear reads it as fast either way).
    model.load_state_dict(state, strict=False, assign=True)
    if config.tie_embeddings:
        model.lm_head.weight = model.wte.weight
    _rebuild_buffers(model)
    return model


def load_hf_model(folder: str | Path, device: str | None = None, name: str | None = None) -> Any:
    """A ``core.engine.checkpoint.LoadedModel`` from a local Hugging Face folder, or a ForeignModelError.

    Example: loaded = load_hf_model("/models/Qwen2.5-0.5B"); loaded.model.run_with_trace(loaded.tokenizer.encode("hi"))
    """
    from core.engine.checkpoint import LoadedModel
    from core.text.hf_tokenizer import HFTokenizer

    path = Path(folder)
    hf = read_config(path)
    config = config_from_hf(hf)
    files = weight_files(path)
    if not (path / "tokenizer.json").is_file():
        raise ForeignModelError("no_tokenizer", f"no tokenizer.json in {path}", folder=path)
    target = device or devices.pick()
    dtype = run_dtype(hf, target)
    skeleton = meta_model(config)
    estimate = estimate_memory(config, dtype, target, skeleton)
    if not estimate.fits:
        raise ForeignModelError(
            "too_big",
            f"{path.name} needs about {estimate.needed_bytes / 1e9:.1f} GB ({estimate.n_params:,} parameters as "
            f"{estimate.dtype}); {(estimate.available_bytes or 0) / 1e9:.1f} GB is free on {target}",
            needed=f"{estimate.needed_bytes / 1e9:.1f}", free=f"{(estimate.available_bytes or 0) / 1e9:.1f}",
            params=f"{estimate.n_params:,}", device=target,
        )
    family = detect_family(hf)
    raw = _read_tensors(files, dtype)
    state = _gpt2_state(raw) if family == "gpt2" else _llama_state(raw, config)
    del raw
    model = build_from_state(config, state, str(path), skeleton).to(target).eval()
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
    metrics = {"family": family, "checkpoint_dtype": checkpoint_dtype(hf), "run_dtype": str(dtype).removeprefix("torch."),
               "n_params": estimate.n_params, "foreign": True}
    return LoadedModel(name=name or path.name, model=model, tokenizer=tokenizer, config=config, metrics=metrics, folder=path)
