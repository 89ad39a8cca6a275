"""Foreign checkpoints (GPT-2, Llama incl. GQA/MQA and Llama-3 RoPE scaling, Qwen2, Mistral) in our core.

Every family is a tiny random-weight model saved by ``transformers`` itself (tests.hf_fixtures);
our numbers are compared with ``transformers``' eager attention on the same folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from core.engine import names
from core.engine.generation import GenerationSettings, generate, prefill
from core.foreign import ForeignModelError, config_from_hf, detect_family, load_catalogue, load_hf_model
from core.foreign.catalog import parse_env, parse_toml
from core.text.hf_tokenizer import HFTokenizer, readable_tokens
from tests.hf_fixtures import FAMILIES, build_checkpoint

torch.set_num_threads(1)
TEXT = "The capital of France is Paris. 法国的首都是巴黎。 Alice gave Bob an apple 🙂"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {family: build_checkpoint(tmp_path_factory.mktemp(family), family) for family in FAMILIES}


def _close(ours: np.ndarray, theirs: np.ndarray, tol: float = 1e-4) -> None:
    scale = max(1.0, float(np.abs(theirs).max()))
    assert ours.shape == theirs.shape
    assert float(np.abs(ours - theirs).max()) <= tol * scale


@pytest.mark.parametrize("family", FAMILIES)
def test_logits_patterns_and_hidden_states_match_transformers(folders: dict[str, Path], family: str) -> None:
    from transformers import AutoModelForCausalLM

    reference = AutoModelForCausalLM.from_pretrained(folders[family], attn_implementation="eager").eval()
    ours = load_hf_model(folders[family], device="cpu")
    ids = ours.tokenizer.encode(TEXT)[: ours.config.n_ctx]
    assert len(ids) > 10
    with torch.no_grad():
        out = reference(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    logits, trace = ours.model.run_with_trace(ids)
    expected = out.logits[0].numpy()
    assert np.abs(expected).max() > 0.5  # big enough that a wrong mapping could not hide
    _close(logits, expected)
    cfg = ours.config
    for layer in range(cfg.n_layer):
        _close(trace[names.act_name("pattern", layer)], out.attentions[layer][0].numpy())
        _close(trace[names.act_name("resid_pre", layer)], out.hidden_states[layer][0].numpy())
        assert trace[names.act_name("k", layer)].shape == (len(ids), cfg.n_kv_head, cfg.d_head)
        assert trace[names.act_name("v", layer)].shape == (len(ids), cfg.n_kv_head, cfg.d_head)
        assert trace[names.act_name("q", layer)].shape == (len(ids), cfg.n_head, cfg.d_head)
    _close(trace["ln_final.hook_normalized"], out.hidden_states[-1][0].numpy())
    assert trace[names.UNEMBED_OUT].dtype == np.float32


def test_families_cover_gqa_mqa_and_biases(folders: dict[str, Path]) -> None:
    configs = {f: load_hf_model(folders[f], device="cpu").config for f in FAMILIES}
    assert configs["llama_gqa"].n_kv_head == 2 < configs["llama_gqa"].n_head == 4
    assert configs["llama3_mqa"].n_kv_head == 1 and configs["llama3_mqa"].rope_llama3 == (8.0, 1.0, 4.0, 16)
    assert configs["qwen2"].qkv_bias and not configs["qwen2"].bias
    assert configs["mistral"].n_ctx == 48  # the sliding window bounds the context we use
    assert configs["gpt2"].positional == "learned" and configs["llama"].positional == "rope"


@pytest.mark.parametrize("family", FAMILIES)
def test_kv_cached_generation_equals_full_recompute(folders: dict[str, Path], family: str) -> None:
    loaded = load_hf_model(folders[family], device="cpu")
    model = loaded.model
    prompt = loaded.tokenizer.encode("The capital of France is")
    state, reports = generate(model, prompt, None, GenerationSettings(temperature=0.0, max_new_tokens=6))
    assert len(state.generated_ids) == 6
    for report in reports:
        assert report.max_abs_logit_diff <= 1e-4 * max(1.0, float(np.abs(report.probs).max()))
    # the cache holds only the K/V heads (GQA's saving), and greedy tokens equal argmax of a full pass
    _, cache = prefill(model, state.ids[:-1])
    assert cache.past[0][0].shape[1] == loaded.config.n_kv_head
    full = model.logits(state.ids[:-1])
    assert [int(np.argmax(full[len(prompt) - 1 + i])) for i in range(6)] == list(state.generated_ids)


def test_tokenizer_round_trip_and_readable_tokens(folders: dict[str, Path]) -> None:
    for family in ("gpt2", "mistral"):  # byte-level BPE and SentencePiece-style byte fallback
        tok = load_hf_model(folders[family], device="cpu").tokenizer
        ids = tok.encode(TEXT)
        assert tok.decode(ids) == TEXT
        assert tok.vocab_size == 512 and len(tok.vocab()) == 512
        shown = tok.display_tokens(ids)
        assert len(shown) == len(ids)
        assert not any("Ġ" in s or "▁" in s for s in shown)
        assert any("法" in s for s in shown) and any("🙂" in s for s in shown)
        trace = tok.encode_with_trace("The lowest")
        assert trace.ids == tuple(tok.encode("The lowest"))
        from core.text.bpe_view import token_origins

        origins = token_origins(trace, known=lambda s: True)
        assert len(origins) == len(trace.ids) and any(o.path for o in origins)  # real merge paths
    assert readable_tokens([b"\xe4\xb8", b"\xad"]) == ["中…", "…中"]
    assert readable_tokens([b"\xe4"]) == ["<0xE4>"]
    assert readable_tokens([b" Paris"]) == [" Paris"]


def test_refusals_are_clear(tmp_path: Path, folders: dict[str, Path]) -> None:
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(tmp_path / "nothing")
    assert err.value.code == "missing_folder"
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(tmp_path)
    assert err.value.code == "missing_config"

    bin_only = tmp_path / "bin"
    bin_only.mkdir()
    shutil.copy(folders["gpt2"] / "config.json", bin_only / "config.json")
    (bin_only / "pytorch_model.bin").write_bytes(b"a pickle we never open")
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(bin_only)
    assert err.value.code == "bin_only"

    broken = tmp_path / "broken"
    shutil.copytree(folders["gpt2"], broken)
    (broken / "config.json").write_text("{not json")
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(broken)
    assert err.value.code == "bad_config"
    (broken / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_layer": 2}))
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(broken)
    assert err.value.code == "bad_config"

    with pytest.raises(ForeignModelError) as err:
        detect_family({"model_type": "mamba"})
    assert err.value.code == "unsupported" and "not supported yet: mamba" in str(err.value)
    assert "gpt2, llama, qwen2, mistral" in str(err.value)
    with pytest.raises(ForeignModelError) as err:
        config_from_hf({**json.loads((folders["llama"] / "config.json").read_text()),
                        "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0}})
    assert err.value.code == "unsupported_feature"

    huge = tmp_path / "huge"
    shutil.copytree(folders["llama"], huge)
    config = json.loads((huge / "config.json").read_text())
    config.update(hidden_size=65536, intermediate_size=262144, num_hidden_layers=400, num_attention_heads=64,
                  num_key_value_heads=8, head_dim=1024)
    (huge / "config.json").write_text(json.dumps(config))
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(huge, device="cpu")  # refused from config.json alone: no weight is read
    assert err.value.code == "too_big" and float(err.value.params["needed"]) > 1000


def test_shape_mismatch_and_missing_tokenizer(tmp_path: Path, folders: dict[str, Path]) -> None:
    wrong = tmp_path / "wrong"
    shutil.copytree(folders["qwen2"], wrong)
    config = json.loads((wrong / "config.json").read_text())
    config["intermediate_size"] = 40
    (wrong / "config.json").write_text(json.dumps(config))
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(wrong, device="cpu")
    assert err.value.code == "bad_weights"
    no_tok = tmp_path / "notok"
    shutil.copytree(folders["qwen2"], no_tok)
    (no_tok / "tokenizer.json").unlink()
    with pytest.raises(ForeignModelError) as err:
        load_hf_model(no_tok, device="cpu")
    assert err.value.code == "no_tokenizer"


def test_catalogue_parsing(tmp_path: Path) -> None:
    found = parse_env("gpt2=/models/gpt2, qwen=/models/qwen ,bad name=/x,classic=/y,nopath", reserved=("classic",))
    assert found.models == {"gpt2": Path("/models/gpt2"), "qwen": Path("/models/qwen")}
    assert len(found.problems) == 3
    toml = parse_toml('[models]\nsmol = "/m/smol"\n"../x" = "/m/x"\n')
    assert toml.models == {"smol": Path("/m/smol")} and len(toml.problems) == 1
    assert parse_toml("[models\n").problems
    file = tmp_path / "models.toml"
    file.write_text('[models]\nsmol = "/m/smol"\ngpt2 = "/m/old"\n')
    assert load_catalogue("gpt2=/m/gpt2", file).models == {"smol": Path("/m/smol"), "gpt2": Path("/m/gpt2")}  # the environment wins
    assert load_catalogue("", tmp_path / "absent.toml").models == {}


def test_hf_tokenizer_pads_to_model_vocab(folders: dict[str, Path]) -> None:
    tok = HFTokenizer.from_folder(folders["gpt2"], model_vocab_size=600)
    assert tok.vocab_size == 600 and tok.decode([599]) == "" and tok.id_to_token(599) == "<unused 599>"
    assert tok.eot_id == tok.token_to_id("<|endoftext|>")


def test_gqa_config_checks_and_round_trip() -> None:
    from core.engine.model import GPTConfig, build_model

    cfg = GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu", n_head=4, d_model=32, n_kv_head=2,
                         qkv_bias=True, bias=False, rope_llama3=(8.0, 1.0, 4.0, 16))
    assert GPTConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert GPTConfig.tiny().n_kv_head == 2 and GPTConfig.tiny().qkv_bias is True  # defaults: classic MHA
    with pytest.raises(ValueError, match="n_kv_head"):
        GPTConfig.tiny(n_kv_head=3, n_head=4, d_model=32)
    model = build_model(cfg, device="cpu")
    assert model.h[0].attn.c_attn.weight.shape == (32 + 2 * 2 * 8, 32)
    assert model.h[0].attn.c_attn.bias is not None and model.h[0].attn.c_proj.bias is None
    # every query head of a group reads the same K/V head: the trace shows K once per group
    _, trace = model.run_with_trace([1, 2, 3, 4])
    assert trace[names.act_name("k", 0)].shape == (4, 2, 8)
    assert trace[names.act_name("pattern", 0)].shape == (4, 4, 4)
    # a plain (SDPA) forward and the traced (explicit) one agree
    np.testing.assert_allclose(model.logits([1, 2, 3, 4]), trace[names.UNEMBED_OUT], rtol=1e-5, atol=1e-5)


def test_cosine_index_equals_the_plain_functions_and_scales() -> None:
    from core.lessons import vectors

    rng = np.random.default_rng(0)
    table = rng.normal(size=(300, 16))
    table[7] = table[3]  # an exact tie must still be ordered by id
    index = vectors.CosineIndex(table)
    def same(ours: list, plain: list) -> None:
        assert [n.token_id for n in ours] == [n.token_id for n in plain]
        np.testing.assert_allclose([n.cosine for n in ours], [n.cosine for n in plain], rtol=0, atol=1e-12)

    for token in (0, 3, 299):
        same(index.neighbours_of_token(token, k=12), vectors.neighbours_of_token(table, token, k=12))
    same(index.analogy(1, 2, 3, k=6), vectors.analogy(table, 1, 2, 3, k=6).neighbours)
    big = rng.normal(size=(150_000, 64)).astype(np.float32)  # a real vocabulary's row count
    found = vectors.CosineIndex(big).neighbours_of_token(42, k=5)
    unit = big / np.linalg.norm(big, axis=1, keepdims=True)
    expected = np.argsort(-(unit @ unit[42]))[1:6]
    assert [n.token_id for n in found] == [int(i) for i in expected]
    sample = vectors.map_sample(150_000, [5, 149_999], limit=1000)
    assert sample is not None and 5 in sample and 149_999 in sample and len(sample) <= 1002
    assert vectors.map_sample(500, [1]) is None


def test_memory_limit_override_refuses_and_built_ins_are_untouched(folders: dict[str, Path]) -> None:
    from core.engine.checkpoint import load_builtin

    with pytest.raises(ForeignModelError) as err:  # 1 kB "free": even the tiny model is too big
        load_hf_model(folders["gpt2"], device="cpu", memory_limit_mb=0.001)
    assert err.value.code == "too_big"
    assert load_hf_model(folders["gpt2"], device="cpu").config.vocab_size == 512
    classic = load_builtin("classic", device="cpu").config
    assert classic.n_kv_head == classic.n_head and classic.qkv_bias == classic.bias  # old checkpoints: plain MHA
