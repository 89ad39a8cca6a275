"""``serving.settings``: one frozen Settings, the doc that lists it, and that nothing else reads
``TOKEN_JOURNEY_*`` from the environment."""

from __future__ import annotations

import dataclasses
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from serving import settings as settings_module
from serving.settings import Settings, SettingsError, unknown_names

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(TOKEN_JOURNEY_[A-Z0-9_]+)` \| (\w+) \| `([^`]*)` \| (.+) \|$")


def doc_rows() -> list[tuple[str, str, str, str]]:
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = [ROW.match(line) for line in text.splitlines() if line.startswith("| `TOKEN_JOURNEY_")]
    assert all(rows), "a table row the parser cannot read"
    return [m.groups() for m in rows if m]


def test_the_doc_and_the_dataclass_agree_exactly() -> None:
    rows = doc_rows()
    fields = dataclasses.fields(Settings)
    assert [r[0] for r in rows] == [Settings.env_name(f.name) for f in fields]  # same names, same order
    for (name, kind, default, what), f in zip(rows, fields, strict=True):
        assert kind == f.type, name
        value = "" if default == '""' else settings_module._parse(name, default, kind)
        assert value == f.default and type(value) is type(f.default), name
        assert len(what) > 20, name


def test_every_default_has_a_reason() -> None:
    source = (ROOT / "serving" / "settings.py").read_text(encoding="utf-8")
    for f in dataclasses.fields(Settings):
        line = next(ln for ln in source.splitlines() if re.match(rf"\s+{f.name}: ", ln))
        assert "#" in line and len(line.split("#", 1)[1].strip()) > 15, f.name


def test_defaults_from_an_empty_environment() -> None:
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({"TOKEN_JOURNEY_THREADS": "  "}) == Settings()  # empty: the default


def test_values_are_parsed_by_type() -> None:
    s = Settings.from_env({"TOKEN_JOURNEY_THREADS": "3", "TOKEN_JOURNEY_COALESCE": "off",
                           "TOKEN_JOURNEY_CACHE_MB": "12.5", "TOKEN_JOURNEY_DEVICE": "cuda:1",
                           "TOKEN_JOURNEY_MODELS": "gpt2=/m/gpt2", "TOKEN_JOURNEY_LIGHT_FRAME_CHECK": "TRUE"})
    assert (s.threads, s.coalesce, s.cache_mb, s.device, s.models, s.light_frame_check) == (3, False, 12.5, "cuda:1",
                                                                                       "gpt2=/m/gpt2", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.threads = 2  # type: ignore[misc]


@pytest.mark.parametrize(("name", "raw", "says"), [
    ("TOKEN_JOURNEY_THREADS", "two", "is not a whole number"),
    ("TOKEN_JOURNEY_THREADS", "1.5", "is not a whole number"),
    ("TOKEN_JOURNEY_TRAIN_JOBS", "-1", "must be 0 or more"),
    ("TOKEN_JOURNEY_CACHE_MB", "lots", "is not a number"),
    ("TOKEN_JOURNEY_CACHE_MB", "nan", "must be 0 or more"),
    ("TOKEN_JOURNEY_COALESCE", "maybe", "is not a switch"),
    ("TOKEN_JOURNEY_DEVICE", "tpu", "is not a device"),
    ("TOKEN_JOURNEY_DEVICE", "cpu:1", "is not a device"),
])
def test_a_malformed_value_is_one_line_naming_it(name: str, raw: str, says: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({name: raw})
    line = str(error.value)
    assert "\n" not in line and line.startswith(f"{name}={raw!r}") and says in line


def test_an_unknown_name_is_one_warning_line() -> None:
    lines: list[str] = []
    s = Settings.from_env({"TOKEN_JOURNEY_THREADZ": "2", "TOKEN_JOURNEY_ALL_SCREENS": "1", "OTHER": "x"},
                          warn=lines.append)
    assert s == Settings()
    assert len(lines) == 1 and "TOKEN_JOURNEY_THREADZ" in lines[0] and "ALL_SCREENS" not in lines[0]
    assert unknown_names({"TOKEN_JOURNEY_MEMLOG": "60"}) == ["TOKEN_JOURNEY_MEMLOG"]  # dropped: now unknown


def test_the_launcher_exits_2_on_a_malformed_value() -> None:
    env = {"PATH": "/usr/bin:/bin", "TOKEN_JOURNEY_THREADS": "many"}
    with socket.socket() as s:  # a free port: the server binds it before it imports app.py
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = subprocess.run([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                             "--server.port", str(port), "--server.headless", "true"],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["[token-journey] TOKEN_JOURNEY_THREADS='many' is not a whole number"]


def test_only_serving_settings_reads_the_environment() -> None:
    readers = []
    for package in ("core", "serving", "ui", "pages", "scripts"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if re.search(r"[\"']TOKEN_JOURNEY_", text) and re.search(r"os\.environ|getenv", text):
                readers.append(str(path.relative_to(ROOT)))
    assert readers == ["serving/settings.py"]
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "TOKEN_JOURNEY_" not in app
