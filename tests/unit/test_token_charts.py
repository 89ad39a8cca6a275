"""ui.charts.tokens: chip layout and the Vega-Lite specs (titles, axis titles, tooltips, data)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ui.charts.tokens import (
    MAX_LINE_WIDTH,
    Chip,
    chip_color,
    chip_records,
    shorten,
    token_chips,
    token_count_curve,
)


def _layers(spec: dict) -> list[dict]:
    out = []
    for layer in spec.get("layer", []):
        out.extend(_layers(layer) if "layer" in layer else [layer])
    return out


def test_same_token_same_colour() -> None:
    """The same colour in every process (replicas, restarts): not Python's salted ``hash()``."""
    tokens = ["est", "␣capital", "首都", "</w>"]
    code = "import json, sys; from ui.charts.tokens import chip_color; print(json.dumps([chip_color(t) for t in json.loads(sys.argv[1])]))"
    root = Path(__file__).resolve().parents[2]
    seen = []
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", code, json.dumps(tokens)], cwd=root, capture_output=True,
                             text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        seen.append(json.loads(run.stdout.strip().splitlines()[-1]))
    here = [chip_color(t) for t in tokens]
    assert seen[0] == seen[1] == here
    assert all(c.startswith("#") for c in here)


def test_shorten_respects_wide_characters() -> None:
    assert shorten("abcdef", 4) == "abc…"
    assert shorten("首都首都首都", 5) == "首都…"
    assert shorten("ab", 4) == "ab"


def test_chip_records_keep_groups_in_order_and_wrap_long_rows() -> None:
    chips = [Chip("low ×5", "low", "low"), Chip("low ×5", "</w>", "</w>"), Chip("lower ×2", "low", "low")]
    records, width = chip_records(chips)
    assert [r["row"] for r in records] == ["low ×5", "low ×5", "lower ×2"]
    assert [r["order"] for r in records] == [0, 0, 1]
    assert records[0]["x1"] <= records[1]["x0"]  # neighbours never overlap
    assert records[0]["fill"] == records[2]["fill"]  # "low" twice, one colour
    many = [Chip("line 1", str(i), str(i)) for i in range(100)]
    records, width = chip_records(many)
    assert width == MAX_LINE_WIDTH
    assert len({r["row"] for r in records}) > 1  # wrapped onto continuation rows
    assert max(r["x1"] for r in records) <= width


def test_token_chips_spec_has_title_axis_titles_tooltips_and_inert_text() -> None:
    chips = [Chip("w ×1", "<script>alert(1)</script>", "x", ("7",), highlight=True)]
    spec = token_chips(chips, title="Chips", x_title="Tokens", y_title="Words", token_title="Token",
                       detail_titles=("Id",))
    assert spec["title"] == "Chips"
    rect, text = _layers(spec)
    assert rect["encoding"]["x"]["title"] == "Tokens" and rect["encoding"]["y"]["title"] == ["Words"]
    assert [t["title"] for t in rect["encoding"]["tooltip"]] == ["Token", "Id"]
    [record] = spec["datasets"]["chips"]
    assert record["stroke_width"] == 3.0
    assert text["mark"]["type"] == "text"  # user text is drawn as chart text, never as HTML
    json.dumps(spec)  # plain JSON: what st.vega_lite_chart sends
    with pytest.raises(ValueError):
        token_chips([], title="t", x_title="x", y_title="y", token_title="k")


def test_templates_are_not_shared_between_calls() -> None:
    a = token_chips([Chip("g", "a", "a")], title="A", x_title="x", y_title="y", token_title="k")
    b = token_chips([Chip("g", "b", "b")], title="B", x_title="x", y_title="y", token_title="k")
    assert a["title"] == "A" and a["datasets"]["chips"][0]["label"] == "a"
    assert b["title"] == "B" and b["datasets"]["chips"][0]["label"] == "b"


def test_token_count_curve_marks_the_current_step() -> None:
    spec = token_count_curve([0, 1, 2], [74, 67, 60], words=13, vocab_sizes=[11, 12, 13], current=1,
                             title="Curve", x_title="Merges", total_title="Tokens", per_word_title="Per word",
                             vocab_title="Vocab")
    assert spec["title"] == "Curve"
    params = {p["name"]: p["value"] for p in spec["params"]}
    assert params["current"] == 1
    assert params["top_per_word"] == pytest.approx(params["top"] / 13)
    rows = spec["datasets"]["curve"]
    assert rows[1] == {"merges": 1, "total": 67, "per_word": 67 / 13, "vocab": 12}
    titles = {layer["encoding"]["y"].get("title") for layer in _layers(spec) if "y" in layer["encoding"]}
    assert {"Tokens", "Per word"} <= titles
    with pytest.raises(ValueError):
        token_count_curve([0], [1, 2], words=1, vocab_sizes=[1], current=0, title="t", x_title="x",
                          total_title="a", per_word_title="b", vocab_title="c")


def test_colour_identifies_the_token_among_the_first_20() -> None:
    from core.text.tokenizer import train_bpe
    from ui.charts.tokens import CHIP_PALETTE, chip_colors

    # The tokens the issue saw sharing one colour, plus every chip of the classic corpus at
    # each training step: distinct tokens on one chart never share a fill.
    assert len(set(chip_colors(["n", "w", "</w>", "est</w>", "wi"]).values())) == 5
    corpus = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
    result = train_bpe(corpus, 10, mode="classic")
    for step in range(0, 11):
        chips = [Chip(word, piece, piece) for word, _, pieces in result.segmentation_at(step) for piece in pieces]
        records, _ = chip_records(chips)
        fill_of: dict[str, str] = {}
        for record in records:
            assert fill_of.setdefault(record["full"], record["fill"]) == record["fill"]  # same token, same colour
        first = list(fill_of)[:20]
        assert len({fill_of[token] for token in first}) == len(first), (step, fill_of)
    # Any 20 different strings get 20 colours (the palette has room for 48).
    keys = [f"tok{i}" for i in range(40)]
    assert len(set(chip_colors(keys).values())) == 40 <= len(CHIP_PALETTE)
    assert chip_colors(["est", "low"])["est"] == chip_color("est")  # first on screen keeps its hash colour


def test_bpe_chips_carry_the_vocabulary_id_in_the_tooltip() -> None:
    from core.text.bpe_view import vocab_id
    from core.text.tokenizer import train_bpe

    corpus = "low lower lowest newest widest"
    full = train_bpe(corpus, 6)
    step = 3  # ids after 3 merges are the full vocabulary's ids (merges only append)
    partial = train_bpe(corpus, step).tokenizer
    pieces = ["lo", "w", "es", "</w>"]
    ids = [vocab_id(full.tokenizer, p) for p in pieces]
    assert ids == [partial.token_to_id(p) for p in pieces]
    assert ids[0] == len(full.base_vocab)  # the first merge comes right after the base symbols
    assert vocab_id(full.tokenizer, "Z") is None  # never seen: no id
    chips = [Chip("lowest ×1", p, p, (str(i),)) for p, i in zip(pieces, ids)]
    spec = token_chips(chips, title="t", x_title="x", y_title="y", token_title="Token",
                       detail_titles=("Id in the vocabulary",))
    for layer in _layers(spec):
        assert [t["title"] for t in layer["encoding"]["tooltip"]] == ["Token", "Id in the vocabulary"]
        assert layer["encoding"]["tooltip"][1]["field"] == "detail_0"
    assert [r["detail_0"] for r in spec["datasets"]["chips"]] == [str(i) for i in ids]


def test_long_chip_and_curve_titles_are_cut_into_lines() -> None:
    long = "0 次合并后的语料（同一颜色 = 同一个 token）"
    spec = token_chips([Chip("g", "a", "a")], title=long, x_title="x", y_title="y", token_title="k")
    assert "\n" in spec["title"] and spec["title"].replace("\n", "") == long


def test_chip_y_titles_are_level_short_lines_beside_the_rows() -> None:
    """A chip chart is one to a few rows tall: a rotated y title did not fit (it was cut) and a
    one-character "词" lay on its side. It is written level above the row labels, in lines of ~10 columns."""
    from core.text.bpe_view import display_width
    from ui.charts.tokens import Y_TITLE_COLUMNS, Y_TITLE_LINE_PX

    for y_title in ("词", "Word", "词 × 出现次数", "Word × how often it occurs"):
        spec = token_chips([Chip("low ×5", "low", "low")], title="t", x_title="x", y_title=y_title, token_title="k")
        for layer in _layers(spec):
            y = layer["encoding"]["y"]
            assert y["axis"]["titleAngle"] == 0 and y["axis"]["titleAlign"] == "right"
            # above the first row, every line of it (not on the row labels)
            assert y["axis"]["titleBaseline"] == "top" and y["axis"]["titleY"] <= -len(y["title"]) * Y_TITLE_LINE_PX
            assert "".join(y["title"]).replace(" ", "") == y_title.replace(" ", "")
            assert all(display_width(line) <= Y_TITLE_COLUMNS for line in y["title"])
    assert len(token_chips([Chip("a", "a", "a")], title="t", x_title="x", y_title="Word × how often it occurs",
                           token_title="k")["layer"][0]["encoding"]["y"]["title"]) > 1
