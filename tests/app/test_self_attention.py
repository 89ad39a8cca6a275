"""Self-attention page (AppTest): the seeds' numbers with defaults, every widget changes the output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from core.lessons import attention_math as am
from tests.app.conftest import assert_clean, chart_title, open_page
from ui.i18n import translate

PAGE = "self_attention"


def charts(at: AppTest) -> dict[str, pd.DataFrame]:
    """Every Vega-Lite chart on the page: its title -> the data it was drawn from."""
    out = {}
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        data = [convert_arrow_bytes_to_pandas_df(d.data.data) for d in element.proto.datasets]
        out[chart_title(spec)] = data[0] if data else pd.DataFrame()
    return out


def matrix_of(frame: pd.DataFrame, rows: list[str], cols: list[str]) -> np.ndarray:
    """Rebuild a matrix from a value_matrix chart's rows (−∞ cells come back as -inf)."""
    m = np.zeros((len(rows), len(cols)))
    for _, r in frame.iterrows():
        value = -np.inf if r["shown"] == "−∞" else float(r["value"])
        m[rows.index(r["row"]), cols.index(r["col"])] = value
    return m


def weights_chart(at: AppTest, lang: str = "en") -> np.ndarray:
    frame = charts(at)[translate("self_attention.chart.weights", lang)]
    return matrix_of(frame, example(lang), example(lang))


def example(lang: str) -> list[str]:
    return list(am.SEED_TOKENS) if lang == "zh" else ["I", "love", "you"]  # the example follows the language


def code_text(at: AppTest) -> str:
    return "\n".join(c.value for c in at.code)


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    assert translate("self_attention.title", lang) in at.title[0].value
    assert len(at.tabs) == 4
    for key in ("sa_source", "sa_scale", "sa_mask", "sa_query", "sa_lab_case", "sa_lab_scores", "sa_dk",
                "sa_mh_heads", "sa_x", "sa_wq", "sa_wk", "sa_wv"):
        assert any(getattr(w, "key", None) == key for w in _widgets(at)), key


def _widgets(at: AppTest) -> list:
    return [*at.radio, *at.toggle, *at.selectbox, *at.text_input, *at.text_area, *at.slider]


def test_defaults_reproduce_the_seeds_row_of_wo(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    text = code_text(at)
    assert "Q₀ · K₀ = 1×0 + 0×1 + 2×1 = 2" in text
    assert "Q₀ · K₁ = 1×1 + 0×2 + 2×1 = 3" in text
    assert "e^2 = 7.389" in text and "e^3 = 20.086" in text
    assert "= 0.155" in text and text.count("= 0.422") == 2
    assert "[1.845, 6.223, 1.733]" in text  # the seeds' [1.843, 6.218, 1.731] before rounding
    weights = weights_chart(at, lang)
    np.testing.assert_allclose(weights[0], [0.155, 0.422, 0.422], atol=5e-4)
    scores = charts(at)[translate("self_attention.chart.scores", lang)]
    np.testing.assert_array_equal(matrix_of(scores, example(lang), example(lang)),
                                  [[2, 3, 3], [2, 4, 4], [1, 2, 3]])
    assert any("15.5%" in m.value and "42.2%" in m.value for m in at.markdown)


def test_defaults_show_the_seeds_masked_rows_in_the_softmax_lab() -> None:
    at = open_page(PAGE)
    table = at.table[0].value
    softmax_col = translate("self_attention.lab.col.softmax", "en")
    rows = dict(zip(table[translate("self_attention.lab.col.scores", "en")], table[softmax_col]))
    assert rows["[2, 3, 3]"] == "[0.155, 0.422, 0.422]"
    assert rows["[2, −∞, −∞]"] == "[1, 0, 0]"
    assert rows["[2, 4, −∞]"] == "[0.119, 0.881, 0]"  # the seeds: [0.12, 0.88, 0]
    assert rows["[1, 2, 3]"] == "[0.090, 0.245, 0.665]"  # the seeds: [0.09, 0.24, 0.67]
    assert rows["[1, −2, 1]"] == "[0.488, 0.024, 0.488]"
    printed = dict(zip(table[translate("self_attention.lab.col.scores", "en")],
                       table[translate("self_attention.lab.col.seeds", "en")]))
    assert printed["[2, 4, −∞]"] == "[0.12, 0.88, 0]"
    plain = dict(zip(table[translate("self_attention.lab.col.scores", "en")],
                     table[translate("self_attention.lab.col.plain", "en")]))
    assert plain["[1, −2, 1]"] == translate("self_attention.lab.plain.short.division_by_zero", "en")


def test_causal_mask_toggle_gives_the_masked_rows() -> None:
    at = open_page(PAGE)
    before = weights_chart(at)
    at.toggle(key="sa_mask").set_value(True).run()
    assert_clean(at)
    after = weights_chart(at)
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after[0], [1, 0, 0])
    np.testing.assert_allclose(after[1], [0.119, 0.881, 0], atol=5e-4)
    np.testing.assert_allclose(after[2], [0.090, 0.245, 0.665], atol=5e-4)
    masked = charts(at)[translate("self_attention.chart.masked", "en")]
    assert (masked["shown"] == "−∞").sum() == 3  # the three cells above the diagonal
    assert not masked.loc[masked["shown"] == "−∞", "finite"].any()  # drawn grey


def test_scale_toggle_divides_by_sqrt_dk() -> None:
    at = open_page(PAGE)
    at.toggle(key="sa_scale").set_value(True).run()
    assert_clean(at)
    np.testing.assert_allclose(weights_chart(at)[0], am.softmax(np.array([2, 3, 3]) / np.sqrt(3)), atol=5e-4)
    assert any("d_k" in lx.value or "sqrt" in lx.value for lx in at.latex)


def test_query_choice_changes_the_hand_calculation() -> None:
    at = open_page(PAGE)
    at.selectbox(key="sa_query").set_value(2).run()
    assert "Q₂ · K₂ = 1.5×1 + −0.5×0 + 1.5×1 = 3" in code_text(at)


def test_as_written_source_shows_the_dependency_and_random_uses_the_seed() -> None:
    at = open_page(PAGE)
    at.radio(key="sa_source").set_value("seeds_as_written").run()
    assert_clean(at)
    assert at.text_area(key="sa_x").value.splitlines()[2] == "1 1 1 1"
    assert at.warning, "the page should say why the seeds' X cannot give their keys"
    at.radio(key="sa_source").set_value("random").run()
    first = at.text_area(key="sa_x").value
    at.number_input(key="w_seed").set_value(7).run()
    assert_clean(at)
    assert at.text_area(key="sa_x").value != first
    assert at.text_area(key="sa_x").value == am.format_matrix(am.random_example(7)[0])


def test_editing_x_changes_the_output_and_bad_input_is_explained(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    at.text_area(key="sa_x").set_value("1 0 1 0\n0 2 0 2\n1 1 1 1").run()
    assert_clean(at)
    assert not np.allclose(weights_chart(at, lang)[2], [0.090, 0.245, 0.665], atol=1e-3)
    for bad in ("1 2\n3", "", "a b c", "1e300 0 0 0", "<script>alert(1)</script>"):
        at.text_area(key="sa_x").set_value(bad).run()
        assert not at.exception
        assert at.error, f"no message for {bad!r}"
    at.text_area(key="sa_x").set_value("1 0 1\n0 2 0").run()  # 3 columns but W has 4 rows
    assert not at.exception and at.error


def test_softmax_lab_division_by_zero_and_masked_input(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    at.selectbox(key="sa_lab_case").set_value("negative").run()
    assert at.text_input(key="sa_lab_scores").value == "1, −2, 1"
    assert any(translate("self_attention.lab.plain.division_by_zero", lang) == e.value for e in at.error)
    at.text_input(key="sa_lab_scores").set_value("2, 4, -inf").run()
    frames = [d.value for d in at.dataframe]
    softmax_col = translate("self_attention.lab.col.softmax", lang)
    lab = next(f for f in frames if softmax_col in f.columns)
    assert list(lab[softmax_col]) == ["0.119", "0.881", "0.000"]
    for bad in ("", "x", "-inf, -inf", "nan", "1e400"):
        at.text_input(key="sa_lab_scores").set_value(bad).run()
        assert not at.exception
        assert at.error, bad


def test_dk_slider_changes_the_saturation() -> None:
    at = open_page(PAGE)
    at.slider(key="sa_dk").set_value(2).run()
    small = [m.value for m in at.metric]
    at.slider(key="sa_dk").set_value(512).run()
    assert_clean(at)
    big = [m.value for m in at.metric]
    assert small != big
    raw_max_small = float(small[1].split("→")[0])
    raw_max_big = float(big[1].split("→")[0])
    assert raw_max_big > 0.9 > raw_max_small  # saturated without ÷√dₖ


def test_multi_head_split_and_heads() -> None:
    at = open_page(PAGE)
    def head_charts(at: AppTest) -> int:
        titles = charts(at)
        return sum(translate("self_attention.mh.head_weights", "en", h=h) in titles for h in range(1, 7))

    assert head_charts(at) == 2
    head1 = charts(at)[translate("self_attention.mh.head_weights", "en", h=1)]
    tokens = example("en")
    expected = am.multi_head_steps(am.SEED_MULTIHEAD_X, 2).weights[0]
    np.testing.assert_allclose(matrix_of(head1, tokens, tokens), expected, atol=1e-9)
    at.selectbox(key="sa_mh_heads").set_value(3).run()
    assert_clean(at)
    assert head_charts(at) == 3


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_prose_has_no_missing_keys(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    body = " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption), *(e.value for e in at.info)])
    assert "⟦" not in body


def test_toy_example_follows_the_language_and_the_typed_tokens() -> None:
    at = open_page(PAGE, lang="en")
    assert_clean(at)
    assert at.text_input(key="w_sa_tokens").value == "I love you" if any(
        w.key == "w_sa_tokens" for w in at.text_input) else True
    intro = next(m.value for m in at.markdown if "three-token example" in m.value)
    assert "**I love you**" in intro
    assert "Q₀ · K₀ = 1×0 + 0×1 + 2×1 = 2   ← I → I" in code_text(at)  # same numbers, English tokens
    # Switch to Chinese: the untouched example becomes 我 爱 你.
    at.session_state["lang"] = "zh"
    at.run()
    assert_clean(at)
    intro = next(m.value for m in at.markdown if "三个词元的例子" in m.value)
    assert "**我 爱 你**" in intro
    # Typed tokens: the intro and the notes follow them.
    tokens_box = next(w for w in at.text_input if "sa_tokens" in str(w.key))
    tokens_box.set_value("猫 吃 鱼").run()
    assert_clean(at)
    assert "**猫 吃 鱼**" in next(m.value for m in at.markdown if "三个词元的例子" in m.value)
    assert any("猫" in c.value and "吃" in c.value for c in at.caption)  # the source note names them
