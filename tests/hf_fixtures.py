"""Tiny random-weight Hugging Face checkpoints for every supported family (no downloads).

Each builder saves a model with ``save_pretrained(..., safe_serialization=True)`` and a small
byte-level BPE ``tokenizer.json`` trained with the ``tokenizers`` library on a few sentences
(English and Chinese), so the whole folder is what a teacher's real checkpoint looks like.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

FAMILIES = ("gpt2", "llama", "llama_gqa", "llama3_mqa", "qwen2", "mistral")
VOCAB = 512  # 256 bytes (+ 256 byte tokens for the SentencePiece style) + merges + specials

_TRAIN_TEXT = [
    "The capital of France is Paris. The capital of Japan is Tokyo.",
    "法国的首都是巴黎。日本的首都是东京。",
    "Alice gave Bob an apple because she was kind.",
    "low lower lowest newer newest wider widest 9.11 9.9",
] * 20


def build_tokenizer(folder: Path, vocab_size: int = VOCAB, sentencepiece: bool = False) -> None:
    """A byte-level BPE tokenizer.json (GPT-2 style), or a Metaspace one with byte fallback (Llama 2 style)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if sentencepiece:
        tok = Tokenizer(models.BPE(byte_fallback=True, unk_token=None))
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace()])
        byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size - 40, special_tokens=["<unk>", "<s>", "</s>", *byte_tokens],
                                      show_progress=False)
    else:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size - 4, special_tokens=["<|endoftext|>"],
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_TRAIN_TEXT, trainer)
    if tok.get_vocab_size() > vocab_size:
        raise AssertionError(f"tokenizer fixture has {tok.get_vocab_size()} tokens, more than {vocab_size}")
    tok.save(str(folder / "tokenizer.json"))


def hf_config(family: str) -> Any:
    from transformers import GPT2Config, LlamaConfig, MistralConfig, Qwen2Config

    common: dict[str, Any] = dict(vocab_size=VOCAB, bos_token_id=0, eos_token_id=0, pad_token_id=None)
    llama: dict[str, Any] = dict(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                                 num_key_value_heads=4, max_position_embeddings=64, rms_norm_eps=1e-6,
                                 initializer_range=0.3, **common)
    if family == "gpt2":
        return GPT2Config(n_layer=2, n_head=2, n_embd=16, n_positions=64, initializer_range=0.3, **common)
    if family == "llama":
        return LlamaConfig(**llama, rope_theta=10000.0)
    if family == "llama_gqa":
        return LlamaConfig(**{**llama, "num_key_value_heads": 2}, rope_theta=500000.0, tie_word_embeddings=True)
    if family == "llama3_mqa":  # Llama 3's long-context RoPE scaling and one K/V head
        return LlamaConfig(**{**llama, "num_key_value_heads": 1}, rope_parameters={
            "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 16})
    if family == "qwen2":
        return Qwen2Config(**{**llama, "num_key_value_heads": 2}, tie_word_embeddings=True)
    if family == "mistral":
        return MistralConfig(**{**llama, "num_key_value_heads": 2}, sliding_window=48)
    raise ValueError(family)


def build_checkpoint(folder: Path, family: str, seed: int = 0, dtype: torch.dtype | None = None) -> Path:
    """Save a random-weight model of this family plus its tokenizer.json into ``folder``.

    ``dtype`` (e.g. torch.bfloat16) saves the weights in that precision, as most real checkpoints are.
    """
    from transformers import AutoModelForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(hf_config(family))
    if family == "qwen2":  # give the q/k/v biases real values: zeros would hide a wrong mapping
        with torch.no_grad():
            for layer in model.model.layers:
                for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                    proj.bias.normal_(0, 0.5)
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True)
    build_tokenizer(folder, sentencepiece=family == "mistral")
    return folder
