"""Transformer block page: both languages, the controls rerun cleanly, the textbook numbers show."""

from __future__ import annotations

import json

import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.i18n import translate
from tests.app.conftest import APP, assert_clean, chart_title, open_page

PAGE = "transformer_block"
COREF = "小明把苹果放进书包，因为它太甜了"


def _texts(at) -> str:
    return "\n".join(str(m.value) for m in [*at.markdown, *at.caption, *at.header, *at.subheader])


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    schema = load_schema()
    charts = _charts(at)
    assert len(charts) >= 10
    for spec in charts:
        validate_jsonschema(spec, schema)
        assert spec.get("title"), spec.get("mark")
    assert sum(m.value.startswith("<svg") for m in at.markdown) == 3  # the layer, Pre-LN and Post-LN drawings
    keys = {w.key for w in [*at.selectbox, *at.multiselect, *at.slider, *at.text_input, *at.number_input, *at.radio]}
    assert {"tb_layer", "tb_ablate_heads", "tb_ablate_mlp", "tb_norm_x", "tb_act_x", "tb_grad_depth",
            "tb_norm_which"} <= keys
    assert "1.595" in _texts(at)


def test_dla_metrics_add_up() -> None:
    at = open_page(PAGE, lang="en", prompt=COREF)
    metrics = {m.label: m.value for m in at.metric}
    assert abs(float(metrics["real logit"]) - float(metrics["sum of the parts"])) < 1e-3


def test_ablation_changes_the_right_side() -> None:
    at = open_page(PAGE, lang="en", prompt=COREF)
    before = [c for c in _charts(at) if "with your change" in chart_title(c)][0]
    at.multiselect(key="tb_ablate_resid").select(0).select(1).run()
    assert_clean(at)
    after = [c for c in _charts(at) if "with your change" in chart_title(c)][0]
    assert json.dumps(before, sort_keys=True) != json.dumps(after, sort_keys=True)
    assert "top prediction" in _texts(at)


def test_nothing_switched_off_shows_the_full_models_prediction() -> None:
    """With no ablation the right side is the prompt's own run (no second forward pass), and it
    comes back after an ablation is removed."""
    def sides(at) -> tuple[str, str]:
        full = [c for c in _charts(at) if "full model" in chart_title(c)][0]
        changed = [c for c in _charts(at) if "with your change" in chart_title(c)][0]
        named = ("title", "description")  # the description (screen readers) repeats the title
        return (json.dumps({k: v for k, v in full.items() if k not in named}, sort_keys=True),
                json.dumps({k: v for k, v in changed.items() if k not in named}, sort_keys=True))

    at = open_page(PAGE, lang="en", prompt=COREF)
    full, changed = sides(at)
    assert full == changed
    at.multiselect(key="tb_ablate_mlp").select(0).select(1).run()
    assert_clean(at)
    assert len(set(sides(at))) == 2
    at.multiselect(key="tb_ablate_mlp").unselect(0).unselect(1).run()
    assert sides(at)[0] == sides(at)[1] == full


def test_controls_rerun(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    at.session_state["kept.tb_layer"] = 2  # (AppTest applies a format_func twice: set the durable value)
    at.run()
    assert_clean(at)
    assert at.selectbox(key="tb_layer").value == 2
    at.text_input(key="tb_norm_x").input("1, 2, 3, 10").run()
    assert_clean(at)
    at.text_input(key="tb_norm_x").input("a, b; <script>").run()
    assert_clean(at)
    assert at.warning
    at.radio(key="tb_norm_which").set_value("ln2").run()
    at.slider(key="tb_act_x").set_value(3.0).run()
    assert_clean(at)
    silu = [d for d in at.dataframe if "SiLU / Swish" in d.value.columns]
    assert silu and silu[0].value["SiLU / Swish"].iloc[0] == "2.8577"


@pytest.mark.parametrize("model", ["classic", "modern"])
def test_both_models(model: str) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = "zh"
    at.session_state["model"] = model
    at.run()
    at.switch_page(f"pages/{PAGE}.py")
    at.run()
    assert_clean(at)
    # the top-5 firing contexts of the chosen neuron: a Markdown table of five rows
    header = translate("transformer_block.kv.col.act", "zh")
    tables = [m.value for m in at.markdown if m.value.startswith(f"| {header} |")]
    assert len(tables) == 1 and len(tables[0].splitlines()) == 2 + 5
    acts = [float(line.split("|")[1].replace("\\", "")) for line in tables[0].splitlines()[2:]]
    assert acts == sorted(acts, reverse=True)  # strongest first


def test_find_the_head_that_matters(lang: str) -> None:
    at = open_page(PAGE, lang=lang, prompt=COREF + "。它指的是")
    at.button(key="tb_ablate_find").click().run()
    assert_clean(at)
    found = [m.value for m in at.markdown if "→" in str(m.value) and "**L" in str(m.value)]
    assert found, "the strongest single-head ablation is not reported"


def test_controls_survive_a_page_change_and_go_into_the_link() -> None:
    at = open_page(PAGE, lang="en", prompt=COREF)
    at.session_state["kept.tb_layer"] = 1  # (AppTest applies a format_func twice: set the durable value)
    at.session_state["kept.tb_token"] = 2
    at.run()
    chosen = (("multiselect", "tb_ablate_mlp", [1]), ("multiselect", "tb_ablate_heads", [0 * 256 + 1]),
              ("slider", "tb_grad_depth", 20), ("text_input", "tb_norm_x", "1, 2, 3, 10"),
              ("radio", "tb_norm_which", "ln2"), ("slider", "tb_act_x", 2.0), ("number_input", "tb_kv_neuron", 5))
    for kind, key, value in chosen:
        widget = getattr(at, kind)(key=key)
        if kind == "multiselect":
            for v in value:
                widget = widget.select(v)
            widget.run()
        elif kind == "text_input":
            widget.input(value).run()
        else:
            widget.set_value(value).run()
        assert_clean(at)
    assert dict(at.query_params)["tb_grad_depth"] == "20"
    at.switch_page("app.py").run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    assert at.selectbox(key="tb_layer").value == 1
    assert at.selectbox(key="tb_token").value == 2
    for kind, key, value in chosen:
        assert getattr(at, kind)(key=key).value == value, key
    assert "L0·H1" in at.multiselect(key="tb_ablate_heads").format_func(1)


def test_crafted_values_fall_back_with_a_note() -> None:
    at = open_page(None, lang="zh")
    crafted = {"tb_layer": 10**9, "tb_token": -7, "tb_ablate_heads": ["../x"], "tb_ablate_resid": [0, 0],
               "tb_grad_depth": 7, "tb_norm_x": 12345, "tb_norm_which": "../../etc/passwd", "tb_act_x": float("nan"),
               "tb_act_up": 99.0, "tb_kv_neuron": "1e9", "tb_dla_target": None}
    for name, value in crafted.items():
        at.session_state[f"kept.{name}"] = value
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    assert at.selectbox(key="tb_layer").value == 0
    assert at.multiselect(key="tb_ablate_heads").value == []
    assert at.slider(key="tb_grad_depth").value == 48
    assert at.text_input(key="tb_norm_x").value == "0.2, 8.5, -3.1, 1.4"
    assert at.slider(key="tb_act_x").value == -3.0
    toasts = [str(x.value) for x in at.toast]
    assert toasts and all("已恢复为默认值" in x for x in toasts), toasts
    # Valid in general but not for this model (layer 200 of a 4-layer model): adapted, no note.
    at.session_state["kept.tb_layer"] = 200
    at.run()
    assert_clean(at)
    assert at.selectbox(key="tb_layer").value == 0


def test_the_textbook_tables_show_the_normalised_samples_in_both_languages(lang: str) -> None:
    """The fixed tables (sent as Markdown, not data frames) hold the textbook numbers."""
    import numpy as np

    from core.lessons import block
    from core.lessons.param_count import TEXTBOOK_MOE

    at = open_page(PAGE, lang=lang)
    contexts = f"| {translate('transformer_block.kv.col.act', lang)} |"  # the neuron's contexts, not a textbook table
    tables = [str(m.value) for m in at.markdown if str(m.value).count("\n| ") >= 2 and not str(m.value).startswith(contexts)]
    assert len(tables) == 5, tables  # raw samples, LayerNorm rows, BatchNorm columns, comparison, MoE
    text = "\n".join(tables).replace("\\", "")
    rows, means, stds = block.normalize_table(block.TEXTBOOK_SAMPLES, "sample")
    first = block.layer_norm(block.TEXTBOOK_SAMPLES[0])
    assert np.allclose(rows[0], first.normalized, atol=1e-9)
    assert "| " + " | ".join(f"{v:.3f}" for v in first.normalized) in text  # sample 1, per sample
    _, bn_means, _ = block.normalize_table(block.TEXTBOOK_SAMPLES, "feature")
    assert "| μ | " + " | ".join(f"{v:.3f}" for v in bn_means) in text  # per feature: each column's mean
    for name, *_ in TEXTBOOK_MOE:
        assert name in text
    assert "⟦" not in text
    if lang == "zh":
        assert "样本" in text or "维" in text
