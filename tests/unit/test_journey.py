"""core.lessons.journey: the journey picture's numbers are the trace's and the logits' own."""

from __future__ import annotations

import json

import numpy as np
import pytest

import core
from core.engine import names
from core.lessons.journey import EMBED_FIRST, TOP_SHOWN, attention_focus, journey_data


def _run(model: str, text: str):
    loaded = core.load_builtin(model)
    ids = loaded.tokenizer.encode(text)
    logits, trace = loaded.model.run_with_trace(ids)
    tokens = [loaded.tokenizer.decode([i]) for i in ids]
    data = journey_data(ids, tokens, logits, trace, loaded.config, vocab_label=lambda i: loaded.tokenizer.decode([i]))
    return loaded, ids, logits, trace, data


def _close(a, b, rel=1e-4) -> None:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rel, atol=rel * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("model", ["classic", "modern"])
def test_values_equal_the_trace(model: str) -> None:
    loaded, ids, logits, trace, data = _run(model, "The capital of France is")
    cfg = loaded.config
    n = len(ids)
    assert [t["id"] for t in data["tokens"]] == list(ids)
    assert [t["text"] for t in data["tokens"]] == [loaded.tokenizer.decode([i]) for i in ids]
    _close(data["embed"]["first"], trace[names.HOOK_EMBED][:, :EMBED_FIRST])
    _close(data["embed"]["norm"], np.linalg.norm(trace[names.HOOK_EMBED], axis=-1))
    assert len(data["layers"]) == cfg.n_layer
    assert data["query_positions"] == list(range(n))
    for layer, block in enumerate(data["layers"]):
        _close(block["attn"], trace[names.act_name("pattern", layer=layer)])
        _close(block["mlp_out_norm"], np.linalg.norm(trace[names.act_name("mlp_out", layer=layer)], axis=-1))
        _close(block["resid_post_norm"], np.linalg.norm(trace[names.act_name("resid_post", layer=layer)], axis=-1))
        _close(block["resid_pre_norm"], np.linalg.norm(trace[names.act_name("resid_pre", layer=layer)], axis=-1))
    _close(data["final_norm"]["norm"], np.linalg.norm(trace[names.LN_FINAL_NORMALIZED], axis=-1))
    # logits of the last position, best first: the whole vocabulary up to MAX_LOGITS, the rest a tail
    from core.lessons.journey import MAX_LOGITS

    last = logits[-1]
    sent = min(cfg.vocab_size, MAX_LOGITS)
    assert data["logits"]["ids"][0] == int(np.argmax(last))
    assert len(set(data["logits"]["ids"])) == len(data["logits"]["ids"]) == sent
    assert min(last[data["logits"]["ids"]]) >= np.sort(last)[::-1][sent - 1]  # the top `sent` logits
    _close(data["logits"]["values"], last[data["logits"]["ids"]])
    assert data["logits"]["tail"]["count"] == cfg.vocab_size - sent
    probs = np.exp(last - last.max()) / np.exp(last - last.max()).sum()
    top = np.argsort(-last)[:TOP_SHOWN]
    assert [t["id"] for t in data["top"]] == [int(i) for i in top]
    _close([t["prob"] for t in data["top"]], probs[top])
    assert data["top"][0]["label"] == loaded.tokenizer.decode([int(top[0])])
    json.dumps(data)  # plain data only


def test_rope_adds_no_position() -> None:
    loaded, ids, _, trace, data = _run("modern", "The capital of France is")
    assert loaded.config.positional == "rope"
    assert data["pos"] is None and data["shapes"]["pos"] is None
    _close(data["resid0"]["first"], trace[names.HOOK_EMBED][:, :EMBED_FIRST])  # block 0 gets the embedding as is


def test_sinusoidal_position_is_added() -> None:
    _, _, _, trace, data = _run("classic", "The capital of France is")
    _close(data["pos"]["first"], trace[names.HOOK_POS_EMBED][:, :EMBED_FIRST])
    _close(np.asarray(data["embed"]["first"]) + np.asarray(data["pos"]["first"]), data["resid0"]["first"], rel=1e-3)


def test_budgets_cut_patterns_and_logits() -> None:
    loaded = core.load_builtin("classic")
    ids = loaded.tokenizer.encode("The capital of France is")
    logits, trace = loaded.model.run_with_trace(ids)
    tokens = [str(i) for i in ids]
    data = journey_data(ids, tokens, logits, trace, loaded.config, vocab_label=str, pattern_budget=10, max_logits=100,
                        sample_pool=20)
    n = len(ids)
    assert data["query_positions"] == [n - 1]
    _close(data["layers"][1]["attn"], trace[names.act_name("pattern", layer=1)][:, [n - 1], :])
    assert len(data["logits"]["values"]) == 100 and len(data["logits"]["labels"]) == 20
    tail = data["logits"]["tail"]
    assert tail["count"] == loaded.config.vocab_size - 100
    assert sum(c for _, c in tail["bins"]) == tail["count"]
    # the tail summary keeps the softmax denominator: exact vs binned, at T = 1
    last = logits[-1].astype(np.float64)
    exact = np.exp(last - last.max()).sum()
    binned = np.exp(np.asarray(data["logits"]["values"]) - last.max()).sum() + sum(
        c * np.exp(v - last.max()) for v, c in tail["bins"])
    assert abs(binned - exact) / exact < 0.01


def test_attention_focus_picks_the_strongest_head() -> None:
    _, ids, _, trace, data = _run("classic", "小明把苹果放进书包，因为它太甜了。它指的是")
    query, keys = 5, [1, 2]
    focus = attention_focus(data, query, keys)
    best = max(((trace[names.act_name("pattern", layer=l)][h, query, keys].sum(), l, h)
                for l in range(len(data["layers"])) for h in range(len(data["layers"][0]["attn"]))),
               key=lambda x: x[0])
    assert (focus["layer"], focus["head"], focus["query"]) == (best[1], best[2], query)
    assert attention_focus(data, query, []) is None


def test_bad_input_is_refused() -> None:
    loaded = core.load_builtin("classic")
    ids = loaded.tokenizer.encode("hi")
    logits, trace = loaded.model.run_with_trace(ids)
    with pytest.raises(ValueError):
        journey_data(ids, ["x"] * (len(ids) + 1), logits, trace, loaded.config, vocab_label=str)
    with pytest.raises(ValueError):
        journey_data(ids, ["x"] * len(ids), logits[:, :5], trace, loaded.config, vocab_label=str)
    bad = logits.copy()
    bad[-1, 0] = np.nan
    with pytest.raises(ValueError):
        journey_data(ids, ["x"] * len(ids), bad, trace, loaded.config, vocab_label=str)


def test_a_long_prompt_draws_its_last_rows() -> None:
    loaded = core.load_builtin("classic")
    ids = loaded.tokenizer.encode("The capital of France is Paris. " * 6)
    logits, trace = loaded.model.run_with_trace(ids)
    tokens = [loaded.tokenizer.decode([i]) for i in ids]
    data = journey_data(ids, tokens, logits, trace, loaded.config, vocab_label=str, max_rows=10)
    n, start = len(ids), len(ids) - 10
    assert n > 10 and data["n_tokens"] == n and data["row_start"] == start
    assert [t["id"] for t in data["tokens"]] == ids[start:]
    _close(data["embed"]["norm"], np.linalg.norm(trace[names.HOOK_EMBED][start:], axis=-1))
    pattern = trace[names.act_name("pattern", layer=2)]
    assert data["query_positions"] == list(range(10))
    _close(data["layers"][2]["attn"], pattern[:, start:, start:])
    _close(data["layers"][2]["attn_hidden"], pattern[:, start:, :start].sum(-1))
    _close(np.asarray(data["layers"][2]["attn"]).sum(-1) + np.asarray(data["layers"][2]["attn_hidden"]), np.ones((4, 10)))
    # focus takes prompt positions; earlier keys than the window are dropped
    focus = attention_focus(data, n - 1, [0, start + 1])
    assert focus is not None and focus["query"] == 9
    assert attention_focus(data, n - 1, [0]) is None


def test_twelve_layers_by_twelve_heads_stay_small() -> None:
    from core.engine.model import GPTConfig, build_model
    cfg = GPTConfig(n_layer=12, n_head=12, d_model=48, d_mlp=96, n_ctx=64, vocab_size=50_000)
    model = build_model(cfg, seed=0, device="cpu")
    ids = list(range(1, 21))
    logits, trace = model.run_with_trace(ids)
    data = journey_data(ids, [str(i) for i in ids], logits, trace, model.config, vocab_label=str)
    assert len(data["layers"]) == 12 and len(data["layers"][0]["attn"]) == 12
    assert data["query_positions"] == [19]  # 12 x 12 x 20 x 20 weights are over the budget: the predicting row only
    assert len(data["logits"]["values"]) == 4096 and data["logits"]["tail"]["count"] == 50_000 - 4096
    assert len(json.dumps(data)) < 200_000
    short_logits, short_trace = model.run_with_trace(ids[:12])
    short = journey_data(ids[:12], [str(i) for i in ids[:12]], short_logits, short_trace, model.config, vocab_label=str)
    assert short["query_positions"] == list(range(12))  # 12 x 12 x 12 x 12 fits: every row
