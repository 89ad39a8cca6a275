"""GPT-2 weights in Hugging Face format load into our core (the foreign gpt2 family) and give the same numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from core.engine import names
from core.foreign import ForeignModelError, config_from_hf, load_hf_weights
from core.engine.model import GPTConfig
from tests.floats import assert_close32

torch.set_num_threads(1)

IDS = [1, 5, 7, 3, 49, 0, 22, 22, 8]


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    # A large init range makes logits big enough that a wrong transpose could not hide.
    config = GPT2Config(n_layer=2, n_head=2, n_embd=16, vocab_size=50, n_positions=32, initializer_range=0.5,
                        eos_token_id=49, bos_token_id=49)
    folder = tmp_path_factory.mktemp("gpt2")
    GPT2LMHeadModel(config).save_pretrained(folder, safe_serialization=True)
    return folder


def test_logits_and_attention_match_transformers(hf_folder: Path) -> None:
    from transformers import GPT2LMHeadModel

    reference = GPT2LMHeadModel.from_pretrained(hf_folder, attn_implementation="eager").eval()
    ours = load_hf_weights(hf_folder)
    assert ours.config == GPTConfig.gpt2_like(n_layer=2, n_head=2, d_model=16, n_ctx=32, vocab_size=50)
    with torch.no_grad():
        out = reference(torch.tensor([IDS]), output_attentions=True, output_hidden_states=True)
    logits, trace = ours.run_with_trace(IDS)
    expected = out.logits[0].numpy()
    assert np.abs(expected).max() > 1.0
    # Tolerances follow float32 rounding at each quantity's own magnitude (tests/floats.py): two
    # implementations that order their sums differently agree to a few dozen ulps, not to 1e-6.
    # A real bug (a transposed Conv1D, a missing 1/sqrt(d)) is off by 1e-2 or more.
    assert_close32(logits, expected, ulps=256)
    for layer in range(2):
        # A weight is exp(score − max) / sum: its error follows the scores' size, not its own.
        scores = trace[names.act_name("attn_scores", layer)]
        assert_close32(trace[names.act_name("pattern", layer)], out.attentions[layer][0].numpy(), scale=scores)
        # HF's hidden_states[i] is the residual stream entering block i.
        assert_close32(trace[names.act_name("resid_pre", layer)], out.hidden_states[layer][0].numpy(), ulps=128)
    assert_close32(trace["ln_final.hook_normalized"], out.hidden_states[2][0].numpy(), ulps=128)
    patterns = trace[names.act_name("pattern", 0)]
    assert np.abs(patterns - out.attentions[1][0].numpy()).max() > 1e-3  # the check can tell layers apart


def test_conv1d_weights_are_transposed(hf_folder: Path) -> None:
    from safetensors.torch import load_file

    raw = load_file(str(hf_folder / "model.safetensors"))
    ours = load_hf_weights(hf_folder)
    conv = raw["transformer.h.0.attn.c_attn.weight"]  # (in, out) = (16, 48)
    assert conv.shape == (16, 48)
    torch.testing.assert_close(ours.h[0].attn.c_attn.weight.cpu(), conv.t())
    assert ours.lm_head.weight is ours.wte.weight


def _refused(folder: Path, code: str, match: str) -> None:
    with pytest.raises(ForeignModelError, match=match) as err:
        load_hf_weights(folder)
    assert err.value.code == code


def test_missing_and_pickle_only_folders_are_refused(tmp_path: Path, hf_folder: Path) -> None:
    _refused(tmp_path, "missing_config", "no config.json")
    (tmp_path / "config.json").write_text((hf_folder / "config.json").read_text())
    _refused(tmp_path, "no_weights", "no model.safetensors")
    (tmp_path / "pytorch_model.bin").write_bytes(b"not loaded")
    _refused(tmp_path, "bin_only", "never loaded")


def test_config_translation_and_refusals(hf_folder: Path) -> None:
    hf = json.loads((hf_folder / "config.json").read_text())
    config = config_from_hf(hf)
    assert (config.d_model, config.d_mlp, config.n_ctx, config.mlp, config.positional) == (16, 64, 32, "gelu_tanh", "learned")
    assert config_from_hf({**hf, "activation_function": "gelu", "n_inner": 40}).d_mlp == 40
    refusals = [
        ({**hf, "activation_function": "relu"}, "unsupported_feature", "activation_function"),
        ({**hf, "model_type": "falcon"}, "unsupported", "not supported yet: falcon"),
        ({**hf, "scale_attn_by_inverse_layer_idx": True}, "unsupported_feature", "attention scaling"),
        ({k: v for k, v in hf.items() if k != "n_embd"}, "bad_config", "lacks 'n_embd'"),
    ]
    for bad, code, match in refusals:
        with pytest.raises(ForeignModelError, match=match) as err:
            config_from_hf(bad)
        assert err.value.code == code


def test_mismatched_weights_are_refused(tmp_path: Path, hf_folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    raw = load_file(str(hf_folder / "model.safetensors"))
    del raw["transformer.h.1.mlp.c_fc.bias"]
    save_file(raw, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text((hf_folder / "config.json").read_text())
    _refused(tmp_path, "bad_weights", "missing \\['h.1.mlp.c_fc.bias'\\]")
