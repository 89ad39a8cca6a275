"""The classroom bench's per-slice latency lines (``--window``): each interaction is counted in the
slice in which it ended, so a long run shows whether its tail is spread out or a few bad moments."""

from __future__ import annotations

from bench.classroom import Stats, window_lines, cpu_sample_every, kind_drift


def test_each_interaction_lands_in_the_slice_it_ended_in() -> None:
    started = 1000.0
    stats = Stats(latencies=[0.1, 0.2, 0.3, 5.0, 0.1], finished_at=[1001.0, 1059.9, 1060.0, 1130.0, 1170.0])
    lines = window_lines(stats, started, 60.0)
    assert len(lines) == 3
    first, second, third = lines
    assert "0-60" in first and "n=2 " in first and "max    200 ms" in first
    assert "60-120" in second and "n=1 " in second and "max    300 ms" in second
    # the one slow interaction shows up in its own slice, not smeared over the run
    assert "120-180" in third and "n=2 " in third and "max   5000 ms" in third


def test_a_slice_with_no_interaction_is_left_out() -> None:
    stats = Stats(latencies=[0.1, 0.1], finished_at=[5.0, 250.0])
    lines = window_lines(stats, 0.0, 60.0)
    assert [line.split(" s ")[0].strip() for line in lines] == ["0-60", "240-300"]


def test_each_slice_says_the_server_and_client_cpu_between_its_samples() -> None:
    stats = Stats(latencies=[0.1, 0.1, 0.1], finished_at=[10.0, 70.0, 130.0])
    # (time, server CPU s, client CPU s): the server uses 30 s in the first minute, 45 s in the
    # second; the client 6 s, then 54 s (it saturates its core: its own queueing, not the server's)
    samples = [(0.0, 100.0, 1.0), (60.0, 130.0, 7.0), (120.0, 175.0, 61.0)]
    first, second, third = window_lines(stats, 0.0, 60.0, samples)
    assert first.endswith("server CPU   50 %  client CPU   10 %")
    assert second.endswith("server CPU   75 %  client CPU   90 %")
    assert "CPU" not in third  # one sample in the last slice: nothing to say
    no_server = window_lines(stats, 0.0, 60.0, [(0.0, None, 1.0), (60.0, None, 7.0)])[0]
    assert "server CPU" not in no_server and no_server.endswith("client CPU   10 %")


def test_samples_taken_as_the_bench_takes_them_give_every_full_slice_its_cpu() -> None:
    # the sampler starts a little after the class and samples every cpu_sample_every(window)
    every = cpu_sample_every(60.0)
    times = [0.02 + i * every for i in range(int(180 / every) + 1)]
    samples = [(t, 2.0 * t, 0.5 * t) for t in times]  # server at 200 %, client at 50 % of a core
    stats = Stats(latencies=[0.1, 0.1, 0.1], finished_at=[10.0, 70.0, 130.0])
    lines = window_lines(stats, 0.0, 60.0, samples)
    assert len(lines) == 3, lines
    for line in lines:
        assert line.endswith("server CPU  200 %  client CPU   50 %"), line


def test_kind_drift_compares_each_kind_first_and_last_full_slice() -> None:
    stats = Stats(latencies=[0.010, 0.030, 0.020, 0.090, 0.050],
                  finished_at=[5.0, 65.0, 10.0, 70.0, 125.0],
                  kinds=["page", "page", "logits:slider", "logits:slider", "page"])
    drift = kind_drift(stats, 0.0, 60.0)
    # the slice 120-180 s is partial (the run ended at 125 s): left out
    assert drift["page"] == "  slice 1 p50    10 ms -> slice 2 p50    30 ms"
    assert drift["logits:slider"] == "  slice 1 p50    20 ms -> slice 2 p50    90 ms"
    assert kind_drift(Stats(latencies=[0.1], finished_at=[5.0], kinds=["page"]), 0.0, 60.0) == {}


def test_a_variant_names_its_server_and_its_environment() -> None:
    import pytest

    from bench.classroom import parse_variant

    assert parse_variant("on=") == ("on", {})
    assert parse_variant("alloff=TOKEN_JOURNEY_COALESCE=0,TOKEN_JOURNEY_MALLOC_MMAP_KB=0") == (
        "alloff", {"TOKEN_JOURNEY_COALESCE": "0", "TOKEN_JOURNEY_MALLOC_MMAP_KB": "0"})
    with pytest.raises(ValueError):
        parse_variant("=TOKEN_JOURNEY_COALESCE=0")  # no name: the summary could not tell the servers apart
    with pytest.raises(ValueError):
        parse_variant("off=TOKEN_JOURNEY_COALESCE")


def test_the_summary_divides_the_server_cpu_by_the_interactions_served() -> None:
    from bench.classroom import summary_row

    stats = Stats(latencies=[0.1] * 18 + [2.0] * 2, finished_at=[1.0] * 20)  # the slowest 10 %: 2 s
    row = summary_row("on:single", 30, stats, cpu_s=1.5, load="1.00 2.00 3.00")
    assert row.split() == ["on:single", "30", "20", "75.0", "100", "2000", "1.00", "2.00", "3.00"]
