"""Logits & sampling page: renders in both languages, the knobs do what the seeds say."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema
from streamlit.testing.v1 import AppTest

from tests.app.conftest import assert_clean, chart_title, open_page, vega_charts_by_place, vega_spec

PAGE = "logits_sampling"
KNOB_KEYS = ("logits_sampling_temperature", "logits_sampling_top_k", "logits_sampling_top_p",
             "logits_sampling_n_samples", "logits_sampling_top_n")


def _assert_valid_charts(at: AppTest) -> None:
    """The pages skip Altair's validation at run time (speed), so every spec is checked here."""
    schema = load_schema()
    charts = at.get("vega_lite_chart")
    assert charts
    for chart in charts:
        validate_jsonschema(json.loads(chart.proto.spec), schema)


def _metric(at: AppTest, label: str) -> str:
    for metric in at.metric:
        if metric.label == label:
            return metric.value
    raise AssertionError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def _charts(at: AppTest) -> list[dict]:
    return [vega_spec(chart) for chart in at.get("vega_lite_chart")]


def _chart_titled(at: AppTest, words: str) -> dict:
    for spec in _charts(at):
        if words in chart_title(spec):
            return spec
    raise AssertionError(f"no chart whose title contains {words!r}")


def _final_column(at: AppTest) -> pd.Series:
    for frame in at.dataframe:
        value = frame.value
        for column in value.columns:
            if "top-p" in column and "final" in column:
                return value[column].reset_index(drop=True)
    raise AssertionError("the step table is missing")


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    keys = {getattr(w, "key", None) for w in [*at.slider, *at.number_input]}
    assert set(KNOB_KEYS) <= keys
    assert len(at.get("vega_lite_chart")) >= 5  # top-N, before/after, histogram, lens grid, lens line
    title = "Logits" if lang == "en" else "Logits 与采样"
    assert title in at.title[0].value
    assert not at.warning and not at.error
    _assert_valid_charts(at)


def test_defaults_show_the_full_vocabulary_and_the_seed_framing() -> None:
    at = open_page(PAGE, lang="en", prompt="法国的首都是")
    assert_clean(at)
    # The tail bar says how many other tokens the softmax covers: the whole vocabulary.
    top = _chart_titled(at, "next-token probabilities")
    assert "of " in top["title"] and "(all other" in json.dumps(top, ensure_ascii=False)
    seed_table = next(f.value for f in at.dataframe if "Textbook: probability" in f.value.columns)
    assert list(seed_table["Word"]) == ["巴黎", "伦敦", "柏林", "苹果"]
    assert list(seed_table["Textbook: probability"])[:2] == ["0.86", "0.04"]
    # The live model tells the same story: 巴黎 first, 伦敦 far lower.
    live = dict(zip(seed_table["Word"], seed_table["Live: probability"].astype(float)))
    assert list(seed_table["Live: rank"])[0] == 1
    assert live["巴黎"] > 0.5 > live["伦敦"]
    assert _metric(at, "Most probable next token") == "巴黎"
    # Knob defaults: T = 1, top-k off, top-p 1 -> the "after" distribution equals the original.
    assert at.slider(key="logits_sampling_temperature").value == 1.0
    assert at.number_input(key="logits_sampling_top_k").value == 0
    assert at.slider(key="logits_sampling_top_p").value == 1.0
    assert _metric(at, "Its probability") == _metric(at, "Top token's probability")


def test_temperature_zero_makes_the_top_token_certain() -> None:
    at = open_page(PAGE, lang="en")
    at.slider(key="logits_sampling_temperature").set_value(0.0).run()
    assert_clean(at)
    assert _metric(at, "Top token's probability") == "1.0000"
    assert _metric(at, "Tokens that can still be drawn") == "1"
    assert any("greedy" in info.value for info in at.info)
    assert _metric(at, "Top token after the knobs") == _metric(at, "Most probable next token")
    _assert_valid_charts(at)


def test_top_k_one_equals_greedy() -> None:
    at = open_page(PAGE, lang="en")
    at.slider(key="logits_sampling_temperature").set_value(0.0).run()
    greedy = _final_column(at)
    greedy_top = _metric(at, "Top token after the knobs")
    at.slider(key="logits_sampling_temperature").set_value(1.0).run()
    assert not _final_column(at).equals(greedy)  # T = 1 alone is not greedy
    at.number_input(key="logits_sampling_top_k").set_value(1).run()
    assert_clean(at)
    pd.testing.assert_series_equal(_final_column(at), greedy)
    assert _metric(at, "Top token after the knobs") == greedy_top
    assert _metric(at, "Top token's probability") == "1.0000"


def test_changing_a_knob_changes_the_chart_and_marks_cut_tokens() -> None:
    at = open_page(PAGE, lang="en")
    before = _chart_titled(at, "after the knobs")
    at.slider(key="logits_sampling_top_p").set_value(0.5).run()
    assert_clean(at)
    after = _chart_titled(at, "after the knobs")
    assert before != after
    assert "top-p = 0.50" in chart_title(after)
    status = next(f.value for f in at.dataframe if "Status" in f.value.columns)["Status"]
    assert "cut by top-p" in set(status)
    assert any("Top-p** then removed" in m.value for m in at.markdown)
    at.slider(key="logits_sampling_temperature").set_value(2.5).run()
    assert "T = 2.50" in chart_title(_chart_titled(at, "after the knobs"))


def test_knobs_are_shared_with_the_generation_page() -> None:
    at = open_page(PAGE, lang="en")
    at.slider(key="logits_sampling_temperature").set_value(0.35).run()
    assert at.session_state["sampling_temperature"] == pytest.approx(0.35)
    at.switch_page("pages/generation.py").run()
    assert_clean(at)
    assert at.slider(key="generation_temperature").value == pytest.approx(0.35)


def test_samples_follow_the_seed_and_n() -> None:
    at = open_page(PAGE, lang="en")
    first = _chart_titled(at, "draws with seed")
    at.slider(key="logits_sampling_n_samples").set_value(1000).run()
    assert_clean(at)
    thousand = _chart_titled(at, "draws with seed")
    assert "1000 draws with seed 0" in chart_title(thousand)
    assert first != thousand
    # The same seed and N give the same histogram on a rerun.
    at.run()
    assert _chart_titled(at, "draws with seed") == thousand


def test_greedy_draws_all_hit_the_top_token() -> None:
    at = open_page(PAGE, lang="en")
    at.slider(key="logits_sampling_temperature").set_value(0.0).run()
    at.slider(key="logits_sampling_n_samples").set_value(300).run()
    caption = next(c.value for c in at.caption if "came out" in c.value)
    assert "came out 300 times; 1 different tokens" in caption


def test_logit_lens_has_one_row_per_layer_plus_the_embedding() -> None:
    at = open_page(PAGE, lang="en")
    spec = _chart_titled(at, "Top 5 tokens per layer")
    text = json.dumps(spec, ensure_ascii=False)
    assert "embedding (before block 0)" in text
    assert "block 0" in text and "block 1" in text


def test_bad_prompt_gets_a_message_not_a_crash(lang: str) -> None:
    for bad in ("", "\x00\x01", "y" * 5000):
        at = open_page(PAGE, lang=lang, prompt=bad)
        assert not at.exception
        assert at.warning


def test_modern_model_renders_too() -> None:
    at = open_page(PAGE, lang="en", prompt="法国的首都是")
    at.session_state["model"] = "modern"
    at.run()
    assert_clean(at)
    assert "modern" in at.selectbox(key="w_model").value
    spec = _chart_titled(at, "Top 5 tokens per layer")
    assert "block 3" in json.dumps(spec, ensure_ascii=False)


def test_temperature_zero_labels_follow_the_logits() -> None:
    # T = 0 with top-k = 3: the 3 best logits survive top-k (not the 3 lowest ids); of those
    # only the argmax keeps probability, the other two are labelled greedy, never "kept".
    at = open_page(PAGE, lang="en")
    at.slider(key="logits_sampling_temperature").set_value(0.0).run()
    at.number_input(key="logits_sampling_top_k").set_value(3).run()
    assert_clean(at)
    status = list(next(f.value for f in at.dataframe if "Status" in f.value.columns)["Status"])
    assert status[:3] == ["kept", "not the top token (T = 0)", "not the top token (T = 0)"]
    assert set(status[3:]) == {"cut by top-k"}
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    element = next(c for c in at.get("vega_lite_chart") if "after the knobs" in chart_title(vega_spec(c)))
    rows = convert_arrow_bytes_to_pandas_df(element.proto.datasets[0].data.data)
    notes = {n for n in rows["note"] if n}
    assert "✂ kept" not in notes and "✂ not the top token (T = 0)" in notes


def test_the_temperature_changes_the_data_not_the_layout() -> None:
    """The browser keeps a chart's view only while the chart stays in its place with the same
    spec text (then it swaps the data in): a note that comes and goes with the temperature must
    not move the charts below it, and the knobs chart carries its changing title as data."""
    at = open_page(PAGE, lang="en")
    seen = {}
    for temperature in (1.0, 1.05, 0.0, 2.5):
        at.slider(key="logits_sampling_temperature").set_value(temperature).run()
        assert_clean(at)
        seen[temperature] = vega_charts_by_place(at)
    places = list(seen[1.0])
    assert all(list(charts) == places for charts in seen.values())
    knobs = next(p for p in places if "after the knobs" in chart_title(vega_spec(seen[1.0][p])))
    draws = next(p for p in places if "draws with seed" in chart_title(vega_spec(seen[1.0][p])))
    for chart in (knobs, draws):
        assert len({charts[chart].proto.spec for charts in seen.values()}) == 1
        assert len({charts[chart].proto.datasets[0].data.data for charts in seen.values()}) == len(seen)
    titles = {temperature: chart_title(vega_spec(charts[knobs])) for temperature, charts in seen.items()}
    assert "T = 2.50" in titles[2.5] and "T = 1.05" in titles[1.05] and "T = 0.00" in titles[0.0]
