"""The two arithmetic calculators, answered in the browser: the Whole model page's parameter
counter and the Generation page's KV-cache memory (a Streamlit components-v2 module,
``frontend/src/calculators_view.ts``, bundled, no CDN).

Python sends once: the presets (their sizes, translated names, sources and published counts),
each input's durable value and limits, and every word already translated. Moving an input or
picking a preset recomputes and redraws in the browser (``src/calculators/``: a port of
``core.lessons.param_count`` and ``core.lessons.kv_memory`` in exact BigInt integers, compared
with them by ``tests/unit/test_calculators_math.py``) and sends nothing. The values stay durable
through the browser knobs' shared state (sessionStorage and the address bar: a page change keeps
them, a link carries them); a link's values come back through ``ui.state.read_url`` and are read
here with ``ui.state.get``, each against its declaration (a tampered value falls back to the
preset's own with the usual translated note). A preset's values are its inputs' defaults, so a
link carries the preset and only the numbers a student changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from ui import state
from ui.components.lessons import knob_specs
from ui.i18n import t
from ui.presenter import presenter_on

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.calculators"

# Registered at import, as the other components are (Streamlit keeps a registry).
_mount = st.components.v2.component(
    COMPONENT_NAME,
    js=(BUILD / "calculators.js").read_text(encoding="utf-8"),
    css=(BUILD / "lessons.css").read_text(encoding="utf-8") + (BUILD / "calculators.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)

# --- the parameter counter (Whole model) ---------------------------------------------------------

WM_WHOLE = ("vocab", "d_model", "n_layer", "n_ctx", "n_head", "n_kv_head", "d_ff", "n_experts", "n_active")
WM_FIELDS = (*WM_WHOLE, "positional", "norm", "ffn", "tied", "bias")  # durable as "wm_<field>"
PART_NAMES = ("token_embedding", "position_embedding", "attention", "ffn", "router", "norms", "lm_head")

_WM_LABELS = {
    "preset": "whole_model.calc.preset", "source": "whole_model.calc.source", "edit": "whole_model.calc.edit",
    "invalid": "whole_model.calc.invalid", "invalid_box": "whole_model.calc.invalid_box",
    "problem_positive": "whole_model.calc.problem.positive", "problem_d_model_heads": "whole_model.calc.problem.d_model_heads",
    "problem_heads_kv": "whole_model.calc.problem.heads_kv", "problem_active_experts": "whole_model.calc.problem.active_experts",
    "problem_kind": "whole_model.calc.problem.kind",
    "total": "whole_model.calc.total", "active": "whole_model.calc.active", "ffn_share": "whole_model.calc.ffn_share",
    "matches": "whole_model.calc.matches", "published": "whole_model.calc.published",
    "chart_title": "whole_model.calc.chart_title", "col_part": "whole_model.col.part", "col_formula": "whole_model.col.formula",
    "col_count": "whole_model.col.count", "col_share": "whole_model.col.share", "axis_params": "whole_model.axis.params",
    "axis_part": "whole_model.axis.part", "axis_model": "whole_model.axis.model", "axis_one_layer": "whole_model.axis.one_layer",
    "share_explain": "whole_model.share.explain", "share_chart_title": "whole_model.share.chart_title",
    **{f"field_{f}": f"whole_model.field.{f}" for f in WM_FIELDS},
    "field_n_shared": "whole_model.field.n_experts",
    **{f"part_{p}": f"whole_model.part.{p}" for p in PART_NAMES},
    **{f"formula_{p}": f"whole_model.formula.{p}" for p in PART_NAMES},
}


@dataclasses.dataclass(frozen=True)
class ArchChoice:
    """One entry of the counter's preset list: its key, its name in the page's language, where it
    comes from (None: this app's model), the published count (None: none exact) and the sizes
    (a ``core.lessons.param_count.ArchSpec``)."""

    key: str
    name: str
    source: str | None
    published: int | None
    spec: Any


def wm_values(presets: Sequence[ArchChoice]) -> tuple[ArchChoice, dict[str, Any]]:
    """The chosen preset and every input's durable value, checked (a crafted value falls back to
    the preset's own, with a note); a field never changed is the preset's value."""
    keys = [p.key for p in presets]
    chosen = state.get("wm_preset")
    preset = presets[keys.index(chosen)] if chosen in keys else presets[0]
    return preset, {f: _following(f"wm_{f}", getattr(preset.spec, f)) for f in WM_FIELDS}


def _following(name: str, default: Any) -> Any:
    """``name``'s durable value, checked, with ``default`` (the preset's value) as its default: the
    server's link then leaves out exactly the values equal to the preset's, as the browser's does."""
    state.bind(name, default=default)  # records the default, checks the value (a crafted one: default + note)
    return state.get(name, default=default)


def _wm_data(view: str, presets: Sequence[ArchChoice], ours_numel: int, kinds: Mapping[str, Mapping[str, str]],
             colours: Mapping[str, str], limits: Mapping[str, int]) -> dict[str, Any]:
    preset, values = wm_values(presets)
    defaults = {f"wm_{f}": getattr(preset.spec, f) for f in WM_FIELDS}
    spec_fields = [f.name for f in dataclasses.fields(presets[0].spec) if f.name != "n_shared"]
    return {
        "view": view,
        "knobs": knob_specs({"wm_preset": preset.key, **{f"wm_{f}": v for f, v in values.items()}}, defaults),
        "presets": [{"key": p.key, "name": p.name, "source": p.source,
                     "published": None if p.published is None else str(p.published),
                     "spec": {f: getattr(p.spec, f) for f in spec_fields}} for p in presets],
        "ours": {"key": presets[0].key, "numel": str(int(ours_numel))},
        "limits": {f: int(limits[f]) for f in WM_WHOLE},
        "kinds": {k: dict(v) for k, v in kinds.items()},
        "colours": dict(colours),
        "labels": {short: t(key) for short, key in _WM_LABELS.items()},
    }


def param_counter(*, key: str, presets: Sequence[ArchChoice], ours_numel: int, kinds: Mapping[str, Mapping[str, str]],
                  colours: Mapping[str, str], limits: Mapping[str, int], view: str = "params") -> None:
    """The counter (``view="params"``: preset, inputs, totals, table, chart) or one layer's parts
    (``view="share"``); ``presets[0]`` is this app's model (its count is checked against ``ours_numel``);
    ``limits``: each whole field's highest value (the ``ui.state`` declaration's; the lowest is 1)."""
    data = _wm_data(view, presets, ours_numel, kinds, colours, limits)
    state.show_notes()  # a crafted durable value just reset: said now, in the page's language
    _mount(key=key, data={**data, "presenter": presenter_on()}, width="stretch", height="content")


# --- the KV-cache memory (Generation) ------------------------------------------------------------

KV_FOLLOWS = ("layers", "heads", "kv_heads", "head_dim", "tokens")  # the preset's values are their defaults
KV_STEPS = {"tokens": 1000}  # an arrow key moves the context by 1,000 tokens, as the old box did

_KV_LABELS = {
    "preset": "generation.memory.preset", "layers": "generation.memory.layers", "q_heads": "generation.memory.q_heads",
    "kv_heads": "generation.memory.kv_heads", "head_dim": "generation.memory.head_dim", "tokens": "generation.memory.tokens",
    "batch": "generation.memory.batch", "dtype": "generation.memory.dtype", "dtype_option": "generation.memory.dtype_option",
    "invalid_box": "generation.memory.invalid_box", "per_layer": "generation.memory.per_layer",
    "total": "generation.memory.total", "exact": "generation.memory.exact", "per_token": "generation.memory.per_token",
    "per_token_help": "generation.memory.per_token.help", "formula": "generation.memory.formula",
    "uneven": "generation.memory.uneven", "layout": "generation.memory.layout", "kv_count": "generation.memory.kv_count",
    "variant_detail": "generation.memory.variant_detail", "variants_title": "generation.chart.variants.title",
    "axis_gb": "generation.axis.gb", "axis_layout": "generation.axis.layout", "growth_title": "generation.chart.growth.title",
    "axis_context": "generation.axis.context", "growth_caption": "generation.chart.growth.caption",
    "numbers": "generation.memory.numbers",
    **{f"col_{c}": f"generation.memory.col.{c}" for c in ("layout", "kv_heads", "share", "per_layer", "total", "saving")},
}


@dataclasses.dataclass(frozen=True)
class KvChoice:
    """One entry of the memory calculator's preset list (name in the page's language)."""

    key: str
    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    tokens: int


def kv_values(presets: Sequence[KvChoice]) -> tuple[KvChoice, dict[str, Any]]:
    """The chosen preset and every input's durable value, checked (see ``wm_values``)."""
    keys = [p.key for p in presets]
    chosen = state.get("generation_kv_preset")
    preset = presets[keys.index(chosen)] if chosen in keys else presets[0]
    values = {f: _following(f"generation_kv_{f}", getattr(preset, f)) for f in KV_FOLLOWS}
    values["batch"] = state.get("generation_kv_batch")
    values["dtype"] = state.get("generation_kv_dtype")
    return preset, values


def kv_memory(*, key: str, presets: Sequence[KvChoice], colours: Sequence[str], limits: Mapping[str, int]) -> None:
    """The KV-cache memory calculator: preset, inputs, sizes, MHA / GQA / MQA, growth with the context;
    ``limits``: each input's highest value (the ``ui.state`` declaration's; the lowest is 1)."""
    preset, values = kv_values(presets)
    defaults = {f"generation_kv_{f}": getattr(preset, f) for f in KV_FOLLOWS}
    data = {
        "view": "kv",
        "knobs": knob_specs({"generation_kv_preset": preset.key, **{f"generation_kv_{f}": v for f, v in values.items()}},
                            defaults),
        "presets": [dataclasses.asdict(p) for p in presets],
        "limits": {f: int(limits[f]) for f in (*KV_FOLLOWS, "batch")},
        "steps": KV_STEPS,
        "colours": list(colours),
        "labels": {short: t(k) for short, k in _KV_LABELS.items()},
        "presenter": presenter_on(),
    }
    state.show_notes()
    _mount(key=key, data=data, width="stretch", height="content")

