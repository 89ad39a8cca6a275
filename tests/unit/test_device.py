"""Device choice and seeding."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from core.engine import device
from core.engine.seed import set_seed


@pytest.fixture(autouse=True)
def _unforced() -> None:
    """Each test starts and ends with no device forced (the process-wide choice)."""
    before = device._FORCED
    device.force(None)
    yield
    device._FORCED = before


def test_force_cpu_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    device.force("CPU")
    assert device.pick() == "cpu"
    assert device.describe().startswith("CPU (")


def test_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The device comes from start-up's Settings (``force``), never from core reading os.environ."""
    monkeypatch.setenv(device.DEVICE_ENV_VAR, "tpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "_mps_available", lambda: False)
    assert device.pick() == "cpu"


def test_default_order_prefers_cuda_then_mps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "_mps_available", lambda: False)
    assert device.pick() == "cpu"
    monkeypatch.setattr(device, "_mps_available", lambda: True)
    assert device.pick() == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.pick() == "cuda"


def test_forced_but_unavailable_devices_are_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device, "_mps_available", lambda: False)
    device.force("cuda")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        device.pick()
    device.force("mps")
    with pytest.raises(RuntimeError, match="MPS backend"):
        device.pick()
    with pytest.raises(ValueError, match="not a device"):
        device.force("tpu")
    device.force(None)
    assert device.pick() == "cpu"


def test_describe_names_the_device() -> None:
    assert device.describe("cpu") == f"CPU ({torch.get_num_threads()} threads)"
    assert device.describe("mps") == "Apple GPU (MPS)"


def test_set_seed_repeats_every_generator() -> None:
    def draw() -> tuple[float, float, float]:
        return random.random(), float(np.random.rand()), float(torch.rand(1))

    set_seed(123)
    first = draw()
    set_seed(123)
    assert draw() == first
    set_seed(124)
    assert draw() != first


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "7", True])
def test_set_seed_rejects_bad_seeds(bad: object) -> None:
    with pytest.raises(ValueError, match="seed must be"):
        set_seed(bad)  # type: ignore[arg-type]
