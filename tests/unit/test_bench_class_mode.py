"""The class-mode bench's own arithmetic (bench/class_mode.py): which applied view answers which
teacher change, CPU as % of one core, the table."""

from __future__ import annotations

import math

import pytest

from bench.class_mode import cpu_pct, follow_delays, table


def test_each_change_takes_the_first_apply_after_it_before_the_next_change() -> None:
    assert follow_delays([10.0, 20.0], [11.2, 12.0, 21.5], 5.0) == pytest.approx([1.2, 1.5])


def test_a_change_never_applied_in_its_window_is_a_miss() -> None:
    # 16.0 is after the 5 s window of the change at 10.0; 19.9 falls before the next change
    assert follow_delays([10.0, 20.0], [16.0], 5.0) == [None, None]
    assert follow_delays([10.0, 20.0], [19.9], 15.0) == [pytest.approx(9.9), None]
    # an apply before any change (the first join) answers none
    assert follow_delays([10.0], [9.0, 10.0], 5.0) == [None]


def test_cpu_percent_of_one_core() -> None:
    assert cpu_pct(3.0, 30.0) == pytest.approx(10.0)
    assert cpu_pct(45.0, 30.0) == pytest.approx(150.0)
    assert math.isnan(cpu_pct(1.0, 0.0))


def test_table_has_a_row_per_measure_and_the_targets_beside() -> None:
    text = table([("cpu", "1.0", "2.0", "≤ 10"), ("ack", "—", "120", "≤ 500")])
    lines = text.splitlines()
    assert lines[0] == "| measure | class mode off | class mode on | target |"
    assert lines[2:] == ["| cpu | 1.0 | 2.0 | ≤ 10 |", "| ack | — | 120 | ≤ 500 |"]
