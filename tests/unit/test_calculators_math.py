"""The browser's calculators (ui/components/frontend/src/calculators/*.ts, as built) equal the
Python core: parameter counts (core.lessons.param_count) and KV-cache sizes
(core.lessons.kv_memory), every number exact (BigInt in the browser) and every string the page
prints formatted as the Python pages format it, on the presets, the inputs' extremes and 240+
random cases each.

Node runs the committed build (build/calculators_math.js); the e2e test
(tests/e2e/test_calculators.py) checks the pages draw what it computes.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from core.lessons.kv_memory import (
    DTYPE_BITS,
    MODEL_PRESETS,
    compare_head_sharing,
    default_contexts,
    format_bytes,
    gqa_choices,
    head_sharing_kind,
    kv_cache_memory,
    total_bytes_by_context,
)
from core.lessons.param_count import COMPONENTS, PRESETS, ArchSpec, count_parameters

BUNDLE = Path(__file__).resolve().parents[2] / "ui" / "components" / "frontend" / "build" / "calculators_math.js"
RUNNER = """
import { readFileSync } from "node:fs";
const m = await import(process.argv[1]);
const { params, kv } = JSON.parse(readFileSync(0, "utf8"));
const big = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.toString()]));
const out = {
  params: params.map((spec) => {
    const bad = m.problem(spec);
    if (bad) return { problem: bad.code };
    const s = m.paramsShown(spec);
    return { components: big(s.count.components), total: s.count.total.toString(), active: s.count.active.toString(),
             per_layer: big(s.count.perLayer), shown_total: s.total, shown_active: s.active, ffn_share: s.ffnShare,
             rows: s.rows.map((r) => [r.part, r.count, r.share]), layer: s.layer,
             layer_parts: s.layerParts.map((p) => [p.part, p.count]) };
  }),
  kv: kv.map((k) => {
    const mem = m.kvCacheMemory(k.n_layer, k.n_kv_head, k.d_head, k.n_tokens, k.batch, k.dtype);
    const s = m.kvShown(k);
    return { per_layer: mem.bytesPerLayer.toString(), total: mem.totalBytes.toString(), per_token: mem.bytesPerToken.toString(),
             shown: { per_layer: s.perLayer, per_layer_exact: s.perLayerExact, total: s.total, total_exact: s.totalExact,
                      per_token: s.perToken, formula: s.formula, layout: s.layout,
                      variants: s.variants.map((v) => [v.kind, v.n_kv_head, v.share, v.perLayer, v.total, v.saving]),
                      contexts: s.contexts, growth: s.growth.map((g) => g.shown) } };
  }),
};
process.stdout.write(JSON.stringify(out));
"""

# The inputs' ranges (ui.state's declarations, which the pages pass to the browser as limits).
WM_HIGH = {"vocab": 10_000_000, "d_model": 1_000_000, "n_layer": 1000, "n_ctx": 1_000_000, "n_head": 4096,
           "n_kv_head": 4096, "d_ff": 4_000_000, "n_experts": 4096, "n_active": 4096}
KV_HIGH = {"n_layer": 1000, "n_head": 1024, "n_kv_head": 1024, "d_head": 4096, "n_tokens": 10_000_000, "batch": 4096}


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the e2e test still compares the pages with core)")
    return node


def _run(params: list[dict], kv: list[dict]) -> dict[str, Any]:
    done = subprocess.run([_node(), "--input-type=module", "-e", RUNNER, BUNDLE.as_uri()], input=json.dumps(
        {"params": params, "kv": kv}), capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


# --- the parameter counter -------------------------------------------------------------------


def _random_spec(rng: random.Random) -> dict[str, Any]:
    """A config, valid most of the time (heads that divide), sometimes at its limits or invalid."""
    def size(high: int) -> int:
        return rng.choice((1, high, rng.randint(1, high), rng.randint(1, 4096)))

    n_kv = rng.choice((1, 2, 4, 8, rng.randint(1, 64)))
    n_head = n_kv * rng.choice((1, 2, 3, 5, rng.randint(1, 64)))
    n_head = min(n_head, WM_HIGH["n_head"]) if rng.random() < 0.95 else rng.randint(1, 4096)
    d_model = n_head * rng.randint(1, max(1, WM_HIGH["d_model"] // n_head)) if rng.random() < 0.9 else size(WM_HIGH["d_model"])
    n_experts = rng.choice((1, 1, 8, 64, size(WM_HIGH["n_experts"])))
    return {
        "vocab": size(WM_HIGH["vocab"]), "d_model": d_model, "n_layer": size(WM_HIGH["n_layer"]), "n_head": n_head,
        "n_kv_head": n_kv if rng.random() < 0.95 else rng.randint(1, 4096), "d_ff": size(WM_HIGH["d_ff"]),
        "n_ctx": size(WM_HIGH["n_ctx"]), "positional": rng.choice(("learned", "sinusoidal", "rope")),
        "norm": rng.choice(("layernorm", "rmsnorm")), "ffn": rng.choice(("gelu", "swiglu")), "tied": rng.random() < 0.5,
        "bias": rng.random() < 0.5, "n_experts": n_experts,
        "n_active": rng.randint(1, n_experts) if rng.random() < 0.95 else size(WM_HIGH["n_active"]),
    }


def _param_cases() -> list[dict[str, Any]]:
    rng = random.Random(4301)
    presets = [{k: v for k, v in dataclasses.asdict(p.spec).items() if k != "n_shared"} for p in PRESETS.values()]
    largest = {**WM_HIGH, "n_kv_head": 1, "positional": "learned", "norm": "layernorm", "ffn": "swiglu", "tied": False,
               "bias": True, "n_head": 4000, "d_model": 1_000_000, "n_active": 4096}
    smallest = {**{k: 1 for k in WM_HIGH}, "positional": "rope", "norm": "rmsnorm", "ffn": "gelu", "tied": True, "bias": False}
    return presets + [largest, smallest] + [_random_spec(rng) for _ in range(300)]


def _pct(numerator: int, denominator: int, digits: int) -> str:
    return f"{100 * numerator / denominator:.{digits}f}"


def test_parameter_counts_and_their_strings_equal_core() -> None:
    cases = _param_cases()
    got = _run(cases, [])["params"]
    valid = 0
    for spec_fields, out in zip(cases, got):
        try:
            spec = ArchSpec(**spec_fields)
        except ValueError:
            assert out == {"problem": out.get("problem")} and out["problem"], (spec_fields, out)
            continue
        assert "problem" not in out, (spec_fields, out)
        valid += 1
        count = count_parameters(spec)
        assert {k: int(v) for k, v in out["components"].items()} == count.components, spec
        assert int(out["total"]) == count.total and int(out["active"]) == count.active, spec
        assert {k: int(v) for k, v in out["per_layer"].items()} == count.per_layer, spec
        # The strings as ui/sections/whole_model.py printed them.
        ffn_share = count.components["ffn"] / count.total
        assert out["shown_total"] == f"{count.total:,}" and out["shown_active"] == f"{count.active:,}"
        assert out["ffn_share"] == f"{100 * ffn_share:.1f} %"
        assert out["rows"] == [[p, f"{count.components[p]:,}", f"{100 * count.components[p] / count.total:.2f}\u00a0%"]
                               for p in COMPONENTS if count.components[p] > 0], spec
        pl = count.per_layer
        in_layer = pl["attention"] + pl["ffn"] + pl["router"] + pl["norms"]
        assert out["layer"] == {
            "attn": f"{pl['attention']:,}", "ffn": f"{pl['ffn']:,}", "norms": f"{pl['norms']:,}", "layer": f"{in_layer:,}",
            "ffn_layer": _pct(pl["ffn"], in_layer, 1), "attn_layer": _pct(pl["attention"], in_layer, 1),
            "ffn_all": f"{100 * ffn_share:.1f}"}, spec
        assert out["layer_parts"] == [[p, f"{pl[p]:,}"] for p in ("attention", "ffn", "router", "norms") if pl[p] > 0]
    assert valid >= 200
    assert max(int(o["total"]) for o in got if "total" in o) > 2**64  # BigInt, not doubles


def test_the_presets_count_their_published_totals_in_the_browser() -> None:
    cases = [{k: v for k, v in dataclasses.asdict(p.spec).items() if k != "n_shared"} for p in PRESETS.values()]
    got = _run(cases, [])["params"]
    for preset, out in zip(PRESETS.values(), got):
        if preset.published is not None:
            assert int(out["total"]) == preset.published


# --- the KV-cache memory ----------------------------------------------------------------------


def _random_kv(rng: random.Random) -> dict[str, Any]:
    def size(high: int) -> int:
        return rng.choice((1, high, rng.randint(1, high), rng.randint(1, 128)))

    n_kv = rng.choice((1, 2, 8, rng.randint(1, 64), size(KV_HIGH["n_kv_head"])))
    n_head = min(KV_HIGH["n_head"], n_kv * rng.randint(1, 16)) if rng.random() < 0.8 else size(KV_HIGH["n_head"])
    return {"n_layer": size(KV_HIGH["n_layer"]), "n_head": n_head, "n_kv_head": n_kv, "d_head": size(KV_HIGH["d_head"]),
            "n_tokens": rng.choice((1, 3, 999, 1000, 1001, 10_000_000, rng.randint(1, 10_000_000))),
            "batch": size(KV_HIGH["batch"]), "dtype": rng.choice(list(DTYPE_BITS))}


def _kv_cases() -> list[dict[str, Any]]:
    rng = random.Random(4302)
    presets = [{"n_layer": p.n_layer, "n_head": p.n_head, "n_kv_head": p.n_kv_head, "d_head": p.d_head,
                "n_tokens": p.n_tokens, "batch": 1, "dtype": "fp16"} for p in MODEL_PRESETS.values()]
    return presets + [{**KV_HIGH, "dtype": "fp32"}, {**{k: 1 for k in KV_HIGH}, "dtype": "int4"}] + [
        _random_kv(rng) for _ in range(300)]


def _expected_kv(k: dict[str, Any]) -> dict[str, Any]:
    """What ui/sections/generation.py printed for these inputs."""
    mem = kv_cache_memory(k["n_layer"], k["n_kv_head"], k["d_head"], k["n_tokens"], k["batch"], k["dtype"])
    shown: dict[str, Any] = {
        "per_layer": format_bytes(mem.bytes_per_layer), "per_layer_exact": f"{mem.bytes_per_layer:,}",
        "total": format_bytes(mem.total_bytes), "total_exact": f"{mem.total_bytes:,}", "per_token": format_bytes(mem.bytes_per_token),
        "formula": {"batch": mem.batch, "tokens": f"{mem.n_tokens:,}", "kv": mem.n_kv_head, "d": mem.d_head,
                    "bytes": f"{DTYPE_BITS[mem.dtype] / 8:g}", "per_layer": format_bytes(mem.bytes_per_layer),
                    "layers": mem.n_layer, "total": format_bytes(mem.total_bytes), "gib": f"{mem.total_bytes / 2**30:.2f}"},
        "layout": None, "variants": [], "contexts": [], "growth": [],
    }
    try:
        layout = head_sharing_kind(k["n_head"], k["n_kv_head"])
    except ValueError:
        return {"mem": mem, "shown": shown}
    shown["layout"] = {"kind": layout, "share": k["n_head"] // k["n_kv_head"]}
    choices = gqa_choices(k["n_head"])
    gqa = k["n_kv_head"] if layout == "GQA" else max([c for c in choices if c <= k["n_head"] // 4],
                                                     default=choices[0] if choices else None)
    variants = compare_head_sharing(k["n_layer"], k["n_head"], gqa, k["d_head"], k["n_tokens"], k["batch"], k["dtype"])
    shown["variants"] = [[v.kind, v.n_kv_head, v.queries_per_kv_head, format_bytes(v.memory.bytes_per_layer),
                          format_bytes(v.memory.total_bytes), f"{v.saving_vs_mha:g}"] for v in variants]
    contexts = default_contexts(k["n_tokens"])
    shown["contexts"] = contexts
    shown["growth"] = [[format_bytes(b) for b in total_bytes_by_context(k["n_layer"], v.n_kv_head, k["d_head"], contexts,
                                                                         k["batch"], k["dtype"])] for v in variants]
    return {"mem": mem, "shown": shown}


def test_kv_cache_sizes_and_their_strings_equal_core() -> None:
    cases = _kv_cases()
    got = _run([], cases)["kv"]
    even = 0
    for k, out in zip(cases, got):
        expected = _expected_kv(k)
        mem = expected["mem"]
        assert int(out["per_layer"]) == mem.bytes_per_layer and int(out["total"]) == mem.total_bytes, k
        assert int(out["per_token"]) == mem.bytes_per_token, k
        assert out["shown"] == expected["shown"], k
        even += expected["shown"]["layout"] is not None
    assert len(cases) >= 200 and even >= 150
    assert max(int(o["total"]) for o in got) > 2**53  # BigInt, not doubles


def test_the_pages_worked_examples_in_the_browser() -> None:
    """The figures the pages' tests used to read from the server's widgets, now from the browser's code."""
    def kv(preset: str, **changes: Any) -> dict[str, Any]:
        p = MODEL_PRESETS[preset]
        return {"n_layer": p.n_layer, "n_head": p.n_head, "n_kv_head": p.n_kv_head, "d_head": p.d_head,
                "n_tokens": p.n_tokens, "batch": 1, "dtype": "fp16", **changes}

    gpt2 = {k: v for k, v in dataclasses.asdict(PRESETS["gpt2-small"].spec).items() if k != "n_shared"}
    got = _run([gpt2, {**gpt2, "n_layer": 24}, {**gpt2, "n_head": 7}, {**gpt2, "n_experts": 8, "n_active": 2}],
               [kv("llama4_scout_like"), kv("gpt2_small"), kv("llama4_scout_like", n_tokens=100_000),
                kv("llama4_scout_like", n_tokens=100_000, batch=2), kv("llama4_scout_like", n_kv_head=7)])
    p = got["params"]
    assert p[0]["shown_total"] == "124,439,808" and p[1]["shown_total"] == f"{124_439_808 + 12 * 7_087_872:,}"
    assert p[2] == {"problem": "d_model_heads"}  # 768 is not divisible by 7
    assert p[3]["shown_total"] != p[3]["shown_active"]
    k = [o["shown"] for o in got["kv"]]
    assert (k[0]["per_layer"], k[0]["total"]) == ("40.96 MB", "1.97 GB")  # the seeds' worked example
    assert [v[4] for v in k[0]["variants"]] == ["9.83 GB", "1.97 GB", "245.76 MB"]
    assert [v[0] for v in k[0]["variants"]] == ["MHA", "GQA", "MQA"]
    assert (k[1]["per_layer"], k[1]["total"]) == ("3.15 MB", "37.75 MB")  # 2 × 1024 × 12 × 64 × 2 bytes
    assert k[2]["total"] == "19.66 GB" and k[3]["total"] == "39.32 GB"  # the seeds' "close to 20 GB", batch 2
    assert k[4]["layout"] is None and k[4]["variants"] == []  # 40 query heads do not split over 7
