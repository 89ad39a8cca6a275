"""Training page: the replay follows its slider, a live run finishes and its model is usable on
another page, and bad input (steps, model names, uploads) falls back safely. Both languages."""

from __future__ import annotations

import json
import time

import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean, chart_title, open_page, spaces

PAGE = "training"


def _charts(at: AppTest) -> list[tuple[dict, str]]:
    """(spec, its data as JSON) of every Vega-Lite chart; the data travels as Arrow datasets."""
    out = []
    for chart in at.get("vega_lite_chart"):
        frames = [convert_arrow_bytes_to_pandas_df(d.data.data).to_json() for d in chart.proto.datasets]
        out.append((json.loads(chart.proto.spec), json.dumps(frames)))
    return out


def _datasets(chart: tuple[dict, str]) -> str:
    return chart[1]


def _chart(at: AppTest, words: str) -> tuple[dict, str]:
    for spec, data in _charts(at):
        if words in chart_title(spec):
            return spec, data
    raise AssertionError(f"no chart titled {words!r}: {[chart_title(s) for s, _ in _charts(at)]}")


def _metric(at: AppTest, label_start: str) -> str:
    for metric in at.metric:
        if metric.label.startswith(label_start):
            return metric.value
    raise AssertionError(f"no metric {label_start!r}")


def _step(value: object) -> int:
    """A select-slider value as AppTest reports it (the formatted option, e.g. "1,177") as an int."""
    return int(str(value).replace(",", ""))


TITLES = {"en": ("Loss during training", "Next token after", "coreference head"),
          "zh": ("训练过程中的损失", "之后的下一个 token", "指代头")}


def test_page_renders_with_every_section(lang: str) -> None:
    at = open_page(PAGE, lang)
    assert_clean(at)
    for key in ("train_step", ):
        assert at.select_slider(key=key)
    for key in ("training_play", "training_view", "training_start"):
        assert at.button(key=key)
    for words in TITLES[lang]:
        _chart(at, words)
    assert list(spaces(at)) == ["training_pca_chart"]  # the 3-D embedding map
    assert not at.get("plotly_chart")
    schema = load_schema()  # the page skips Altair's validation at run time (speed): check every spec here
    for chart in at.get("vega_lite_chart"):
        validate_jsonschema(json.loads(chart.proto.spec), schema)
    assert _metric(at, "step" if lang == "en" else "步数").startswith("0 /")


def test_replay_slider_moves_every_chart(lang: str) -> None:
    at = open_page(PAGE, lang)
    before = {w: _datasets(_chart(at, w)) for w in TITLES[lang]}
    pca_before = spaces(at)["training_pca_chart"]
    held_before = _metric(at, "held-out" if lang == "en" else "留出集")
    steps = at.select_slider(key="train_step").options
    at.select_slider(key="train_step").set_value(steps[-1]).run()
    assert_clean(at)
    assert _metric(at, "step" if lang == "en" else "步数").startswith(f"{_step(steps[-1]):,} /")
    for words in TITLES[lang]:
        assert _datasets(_chart(at, words)) != before[words], words
    pca_after = spaces(at)["training_pca_chart"]
    assert pca_after["points"]["id"] == pca_before["points"]["id"]  # the same tokens, moved by training
    assert pca_after["points"]["x"] != pca_before["points"]["x"] and pca_after["title"] != pca_before["title"]
    assert float(_metric(at, "held-out" if lang == "en" else "留出集")) < float(held_before)


def test_view_the_app_at_a_step_reaches_other_pages() -> None:
    at = open_page(PAGE, "en")
    steps = at.select_slider(key="train_step").options
    middle = steps[len(steps) // 2]
    at.select_slider(key="train_step").set_value(middle).run()
    at.button(key="training_view").click().run()
    assert_clean(at)
    name = f"classic @ step {_step(middle)}"
    assert at.session_state["model"] == name
    assert name in at.selectbox(key="w_model").options
    at.switch_page("pages/multi_head_attention.py").run()
    assert_clean(at)
    assert at.selectbox(key="w_model").value == name
    # another session never sees this session's snapshot in its list
    other = open_page("multi_head_attention", "en")
    assert name not in other.selectbox(key="w_model").options


def test_play_advances_the_step() -> None:
    at = open_page(PAGE, "en")
    first = _step(at.select_slider(key="train_step").value)
    at.button(key="training_play").click().run()
    at.run()  # a timer tick is a rerun
    assert_clean(at)
    assert _step(at.select_slider(key="train_step").value) > first


def _wait_finished(at: AppTest, timeout: float = 180.0) -> AppTest:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if at.success:
            return at
        time.sleep(1.0)
        at.run()
        assert_clean(at)
    raise AssertionError(f"the live run did not finish: {[m.value for m in at.info + at.warning + at.caption]}")


def test_live_run_finishes_and_its_model_is_selectable(lang: str) -> None:
    at = open_page(PAGE, lang)
    at.number_input(key="train_steps").set_value(6).run()
    at.button(key="training_start").click().run()
    assert_clean(at)
    at = _wait_finished(at)
    live = _chart(at, "Live training loss" if lang == "en" else "实时训练损失")
    validate_jsonschema(live[0], load_schema())
    assert at.get("download_button")
    name = next(n for n in at.selectbox(key="w_model").options if n.startswith("trained tiny classic"))
    at.switch_page("pages/logits_sampling.py").run()
    at.selectbox(key="w_model").set_value(name).run()
    assert_clean(at)
    assert at.session_state["model"] == name
    assert at.get("vega_lite_chart")  # the page draws with the new model


def test_bad_input_falls_back() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"model": "classic @ step 99999", "train_step": "99999", "train_steps": "-5",
                            "train_corpus": "/etc/passwd", "train_lr": "nan"})
    at.run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    assert at.session_state["model"] == "classic"
    assert _step(at.select_slider(key="train_step").value) == _step(at.select_slider(key="train_step").options[0])
    assert at.selectbox(key="train_corpus").value == "capitals"
    # a crafted value in the session for the model (a snapshot step that does not exist) is refused too
    at.session_state["model"] = "classic @ step 99999"
    at.run()
    assert_clean(at)
    assert at.session_state["model"] == "classic"


@pytest.mark.parametrize("data,code", [(b"\xff\xfe\x00bad" * 1000, "not_utf8"), (b"short", "too_short"),
                                       (b"a" * (2 * 1024 * 1024 + 1), "too_big")])
def test_bad_uploads_are_refused(data: bytes, code: str) -> None:
    from serving.live_train import check_upload

    with pytest.raises(ValueError, match=code):
        check_upload(data)


@pytest.fixture(scope="module")
def trained_name() -> str:
    """A tiny model trained in-process for 3 steps and served like a finished live run."""
    import queue
    import threading

    from serving.live_train import JobSpec, loaded_from_result, run_job
    from ui import session_models

    out: queue.Queue = queue.Queue()
    run_job(JobSpec(steps=3, batch_size=2), out, threading.Event(), niceness=0)
    messages = []
    while not out.empty():
        messages.append(out.get())
    kind, result = messages[-1]
    assert kind == "done", result
    name = "trained tiny classic #0-test"
    session_models.add_trained(name, loaded_from_result(result, name))
    return name


@pytest.mark.parametrize("which", ["trained", "snapshot"])
def test_session_models_work_on_every_page(which: str, trained_name: str) -> None:
    from ui import nav, session_models

    name = trained_name if which == "trained" else session_models.snapshot_model_name("classic", 0)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["_session_models"] = [name]
    at.session_state["model"] = name
    at.run()
    assert_clean(at)
    assert at.session_state["model"] == name
    for _, pages in nav.existing_sections():
        for page in pages:
            if page.path == "app.py":
                continue
            at.switch_page(page.path).run()
            assert_clean(at)
            assert at.session_state["model"] == name, page.page_id
