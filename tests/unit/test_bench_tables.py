"""The benches' tables stay true to the app: the browser knobs the classroom bench finds in a
page's component data (``bench/proto_client.py``), the declared ones it adds, and the rows of
``bench/browser_latency.py`` (each knob declared in ``ui.state`` for its page, its control drawn
by the component code, every knob the issue moved into the browser measured)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.proto.BidiComponent_pb2 import BidiComponent

from bench import browser_latency as bl
from bench.proto_client import DECLARED_KNOBS, component_knobs, knob_names
from ui import state
from ui.components import knobs, lessons

FRONTEND = Path(__file__).resolve().parents[2] / "ui" / "components" / "frontend" / "src"


def _frontend_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(FRONTEND.rglob("*.ts")))


# --- the knobs found in component data ---------------------------------------------------------


def test_knob_names_finds_every_knobspec_shape_the_components_send() -> None:
    # lessons (a list with kinds) and the sampling labs (a list with ranges): the real builders
    lesson = {"view": "table", "knobs": lessons.knob_specs({"pe_d_model": 8, "pe_pairs": None}, {"pe_pairs": [0, 3]})}
    sampling = {"logits": "AAAA", "knobs": knobs.specs([knobs.Knob("sampling_temperature", 0.0, 3.0),
                                                        knobs.Knob("sampling_top_k", 0, 50)])}
    # the head picker, the BPE step, the 3-D map: dicts of specs (as their Python builds them)
    heads = {"labels": ["a", "b"], "knobs": {"layer": {"name": "mha_layer", "value": 1, "default": 0},
                                             "query": {"name": "mha_query", "value": 1, "default": 1, "scope": "p"}}}
    bpe = {"merges": [{"left": "a", "right": "b", "new": "ab"}], "knob": {"name": "tok_merge_step", "value": 3, "default": 0}}
    space = {"points": [[0, 1, 2]], "views": {"knobs": {"only": {"name": "embeddings_map_only", "value": 0, "default": 0}},
                                              "fits": [{"key": 0, "label": "all"}]}}
    assert knob_names(lesson) == ["pe_d_model", "pe_pairs"]
    assert knob_names(sampling) == ["sampling_temperature", "sampling_top_k"]
    assert knob_names(heads) == ["mha_layer", "mha_query"]
    assert knob_names(bpe) == ["tok_merge_step"]
    assert knob_names(space) == ["embeddings_map_only"]
    # labels, legends and groups have a name but are not knobs
    assert knob_names({"groups": [{"name": "fruit", "ring": False}], "labels": {"name": "Name"}}) == []


def test_component_knobs_reads_plain_and_mixed_json_and_adds_the_declared() -> None:
    plain = BidiComponent(id="$$ID-abc-pe_table", component_name="token_journey.positional",
                          json=json.dumps({"knobs": lessons.knob_specs({"pe_base": 2})}))
    assert [(k.name, k.component) for k in component_knobs(plain)] == [("pe_base", "token_journey.positional")]
    mixed = BidiComponent(id="x", component_name="token_journey.bpe_steps")
    mixed.mixed.json = json.dumps({"knob": {"name": "tok_merge_step", "value": 0, "default": 0}})
    assert [k.name for k in component_knobs(mixed)] == ["tok_merge_step"]
    journey = BidiComponent(id="y", component_name="token_journey.journey",
                            json=json.dumps({"knobs": {"temperature": 1.0, "top_k": 0, "top_p": 1.0}}))
    assert [k.name for k in component_knobs(journey)] == list(DECLARED_KNOBS["token_journey.journey"])
    assert component_knobs(BidiComponent(id="z", component_name="other", json="not json")) == []


def test_the_declared_journey_knobs_are_what_the_journey_sends() -> None:
    """The journey sends plain values {temperature, top_k, top_p} (index.ts turns them into the
    sampling_* KnobSpecs): the declared names must be exactly those, each declared in ui.state."""
    from ui.components import journey

    sent = journey._sampling_knobs()
    assert DECLARED_KNOBS["token_journey.journey"] == tuple(f"sampling_{k}" for k in sent)
    for name in DECLARED_KNOBS["token_journey.journey"]:
        assert name in state.SPECS
        assert f'name: "{name}"' in (FRONTEND / "index.ts").read_text(encoding="utf-8")


# --- bench/browser_latency.py's rows -----------------------------------------------------------

# Issue #43, item 1: every knob moved into the browser, by its ui.state name.
ISSUE_KNOBS = {
    "sampling_temperature", "sampling_top_k", "sampling_top_p",  # Logits / Generation
    "pe_d_model", "pe_position", "pe_pairs", "pe_rope_m",  # positional: d_model, position, waves, RoPE angle
    "sa_lab_scores", "sa_scale", "sa_mask",  # self-attention: softmax lab, ÷√d_k, mask
    "tok_merge_step",  # the BPE merge step
    "embeddings_map_only", "embeddings_map_fit_categories",  # the embeddings map's toggles
    "mha_head", "mha_layer",  # multi-head: head / layer picker
}


def test_every_knob_the_issue_moved_into_the_browser_has_a_row() -> None:
    measured = {row.knob for row in bl.ROWS if row.in_browser}
    assert ISSUE_KNOBS <= measured, sorted(ISSUE_KNOBS - measured)
    names = [row.name for row in bl.ROWS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("row", [r for r in bl.ROWS if r.in_browser], ids=lambda r: r.name)
def test_each_browser_row_is_a_declared_knob_of_its_page_with_a_drawn_control(row: bl.Row) -> None:
    spec = state.SPECS[row.knob]
    page = row.path.split("?")[0]
    assert spec.pages is None or page in spec.pages or (page == "" and row.knob in DECLARED_KNOBS["token_journey.journey"])
    assert row.how == "keys" and all(row.keys) and row.drawn and row.target_ms == bl.BROWSER_TARGET_MS
    source = _frontend_source()
    # the control's own marks (data-knob names, classes) are drawn by the component code
    for knob in re.findall(r"data-knob=['\"]?([a-z_]+)", row.control):
        assert f'"{knob}"' in source or f"'{knob}'" in source, knob
    for cls in re.findall(r"\.([a-z][a-z0-9-]+)", row.control.split(" >> ")[0]):
        if not cls.startswith("st-key-"):
            assert f'"{cls}' in source or f" {cls}" in source, cls


def test_server_rows_cover_the_issues_server_interactions() -> None:
    server = [row for row in bl.ROWS if not row.in_browser]
    assert {row.how for row in server} >= {"prompt", "click", "ablate", "option"}
    assert all(row.target_ms == bl.SERVER_TARGET_MS for row in server)


def test_the_table_flags_frames_and_missing_redraws() -> None:
    browser_row = next(r for r in bl.ROWS if r.in_browser)
    server_row = next(r for r in bl.ROWS if not r.in_browser)
    rows = (browser_row, server_row)
    lines = bl.table(rows, {browser_row.name: [bl.Move(10.0, 0), bl.Move(20.0, 0)],
                            server_row.name: [bl.Move(-1.0, 2)]}, "t")
    assert lines[2].endswith("✓") and lines[2].split()[-2] == "0"  # 0 frames per move
    assert "no redraw seen" in lines[3]
    sent = bl.table(rows, {browser_row.name: [bl.Move(10.0, 1)]}, "t")
    assert sent[2].endswith("✗")  # a browser knob that sent a frame fails, however fast
    assert "not measured" in sent[3]


# --- bench/classroom.py's browser-knob line ------------------------------------------------------


def test_classroom_counts_browser_knobs_apart_from_the_server() -> None:
    from bench.classroom import Stats, browser_line

    stats = Stats(latencies=[0.1, 0.2, 0.3], browser_knobs={"logits_sampling:sampling_top_p": 2,
                                                             "tokenization:tok_merge_step": 1})
    assert stats.browser_moves == 3 and stats.browser_share() == 0.5  # 3 of 6 interactions
    line = browser_line(stats)
    assert line.startswith("browser knobs: 3 moves, 0 frames") and "50 %" in line
    assert line.index("sampling_top_p 2") < line.index("tok_merge_step 1")  # the most moved first
    assert "0 moves" in browser_line(Stats(latencies=[0.1]))
