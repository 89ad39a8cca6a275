"""Foreign checkpoints: a teacher's local Hugging Face folders, loaded into our own ``GPT``.

One weight-conversion file per model family, as TransformerLens does it:

    config.py    config.json: read it, detect the family, checked fields, ForeignModelError
    memory.py    will it fit? parameters counted on the meta device against free RAM / VRAM
    gpt2.py      GPT-2 (and DistilGPT-2): learned positions, LayerNorm, tanh-GELU, Conv1D weights
    llama.py     Llama 2 / 3 / 3.x, TinyLlama, SmolLM: RoPE, RMSNorm, SwiGLU, grouped-query attention
    qwen2.py     Qwen2 / Qwen2.5: Llama's layout plus biases on q, k and v
    mistral.py   Mistral: Llama's layout with a sliding window (we keep n_ctx within it)
    loader.py    the one path every family takes: config -> memory check -> tensors -> our GPT
    catalog.py   which folders the teacher serves, by name (models.toml and TOKEN_JOURNEY_MODELS)

Why Qwen2 and Mistral have files of their own although their tensors are Llama's: each has
one config difference that changes the model (Qwen2's q/k/v-only biases, Mistral's window),
and a reader looking for "what is special about Qwen2" should find it under that name rather
than as a branch inside Llama's code. Their files are a few lines that call Llama's with
that difference; the weight mapping table is written once, in ``llama.py``.

Everything else is refused with ``ForeignModelError`` (code ``unsupported``) naming the model
type and the supported families. Nothing here reads the environment: the server passes the
memory limit and the catalogue's settings in.
"""

from core.foreign.catalog import Catalogue, load_catalogue, parse_env, parse_toml
from core.foreign.config import SUPPORTED_FAMILIES, ForeignModelError, detect_family, read_config
from core.foreign.loader import config_from_hf, load_hf_model, load_hf_weights
from core.foreign.memory import MemoryEstimate, available_memory, estimate_memory

__all__ = [
    "SUPPORTED_FAMILIES",
    "Catalogue",
    "ForeignModelError",
    "MemoryEstimate",
    "available_memory",
    "config_from_hf",
    "detect_family",
    "estimate_memory",
    "load_catalogue",
    "load_hf_model",
    "load_hf_weights",
    "parse_env",
    "parse_toml",
    "read_config",
]
