"""Device choice and seeding."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from core.engine import device
from core.engine.seed import set_seed


def test_env_var_forces_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(device.DEVICE_ENV_VAR, "CPU")
    assert device.pick() == "cpu"
    assert device.describe().startswith("CPU (")


def test_default_order_prefers_cuda_then_mps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(device.DEVICE_ENV_VAR, raising=False)
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
    monkeypatch.setenv(device.DEVICE_ENV_VAR, "cuda")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        device.pick()
    monkeypatch.setenv(device.DEVICE_ENV_VAR, "mps")
    with pytest.raises(RuntimeError, match="MPS backend"):
        device.pick()
    monkeypatch.setenv(device.DEVICE_ENV_VAR, "tpu")
    with pytest.raises(ValueError, match="not a device"):
        device.pick()


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
