"""Every ``TOKEN_JOURNEY_*`` setting of the server, read once into one frozen ``Settings``.

This is the only module that reads ``TOKEN_JOURNEY_*`` variables from the environment
(``tests/unit/test_settings.py`` checks it); ``docs/configuration.md`` lists them all and a test
checks that it and the dataclass agree. Start-up (``serving.startup``) reads them once:

    settings = Settings.from_env()          # SettingsError: one line naming the bad value
    settings.threads                        # -> 1

An unset or empty variable takes the default. A malformed value stops the server with one line
(exit code 2); a ``TOKEN_JOURNEY_*`` name that is not a setting is one warning line (a typo must
not go unnoticed, nor stop a class). Stdlib only: the launcher reads it before numpy is imported.

Example: Settings.from_env({"TOKEN_JOURNEY_THREADS": "2"}).threads -> 2
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

PREFIX = "TOKEN_JOURNEY_"
# Knobs that only the test suite reads (tests/e2e): not settings of the server, so not reported.
TEST_ONLY = ("TOKEN_JOURNEY_ALL_SCREENS",)


class SettingsError(ValueError):
    """A malformed ``TOKEN_JOURNEY_*`` value; ``str(error)`` is the one line to show."""


@dataclass(frozen=True)
class Settings:
    """The server's settings; each field is ``TOKEN_JOURNEY_<FIELD NAME IN CAPITALS>``."""

    # --- serving ---------------------------------------------------------------------------
    allowed_hosts: str = ""  # scripts/classroom.sh only: the addresses students type (empty: this machine's)
    background_load: bool = True  # load both built-ins at start, so the first student does not wait
    device: str = ""  # empty: cuda, else mps, else cpu; "cpu"/"cuda"/"cuda:N"/"mps" forces one
    threads: int = 1  # torch/BLAS threads per request: many tiny forwards from many sessions fight over more
    start_hold_s: float = 4.0  # start-up work waits this long for the first page to be drawn (0: no wait)
    train_jobs: int = 0  # live-training jobs at once; 0: one per core, one core left for the pages
    # --- models ----------------------------------------------------------------------------
    models: str = ""  # the teacher's checkpoints, "name=/folder,name2=/folder2" (wins over models.toml)
    models_toml: str = ""  # another models.toml (empty: models.toml next to app.py)
    memory_limit_mb: float = 0.0  # memory a foreign checkpoint may take (0: what the machine has free)
    snapshot_root: str = ""  # folder of the Training page's snapshot sets (empty: assets/models)
    # --- class mode (serving.classroom; docs/class_mode.md) -------------------------------------
    teacher_key: str = field(default="", repr=False)  # the launchers draw a random one per start; empty: no class mode
    redis_url: str = ""  # the class store on Redis (many machines); empty: embedded SQLite in class_dir
    class_dir: str = ""  # folder of the embedded class store (the launcher's run folder); empty: a private temp one
    # --- memory budgets --------------------------------------------------------------------
    cache_mb: float = 40.0  # all memoised chart specs/tables together: a few hundred specs, flat over a lesson
    run_cache_mb: float = 96.0  # cached forward passes: a 128-token trace is ~9.5 MB, so ~10 full ones
    snapshot_mb: float = 40.0  # Training snapshots loaded at once (~13-16 MB each): 2-3, the rest reload
    # --- process tuning ----------------------------------------------------------------------
    gc_freeze: bool = True  # gc.freeze() after start-up: collections under a class skip torch and both models
    # --- Streamlit 1.67.0 patches (serving.patches; skipped on any other version) ----------
    coalesce: bool = True  # one event-loop wake-up per batch of messages, not one per message
    post_run_full_gc_s: float = 30.0  # after a run collect generations 0-1; a full one this often (0: every run)
    light_frame_check: bool = True  # a component's plain lists/dicts skip the pandas data-frame check

    @classmethod
    def env_name(cls, field_name: str) -> str:
        """Example: Settings.env_name("cache_mb") -> "TOKEN_JOURNEY_CACHE_MB" """
        return PREFIX + field_name.upper()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None,
                 warn: Callable[[str], None] | None = None) -> Settings:
        """Read every setting from ``environ`` (default ``os.environ``).

        Raises ``SettingsError`` (one line) for a malformed value; a ``TOKEN_JOURNEY_*`` name that
        is not a setting is passed to ``warn`` as one line (default: printed to stderr).

        Example: Settings.from_env({"TOKEN_JOURNEY_COALESCE": "0"}).coalesce -> False
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(cls.env_name(f.name), "")
            if raw.strip():
                values[f.name] = _parse(cls.env_name(f.name), raw.strip(), f.type)
        settings = cls(**values)
        _check_device(settings.device)
        _check_teacher_key(settings.teacher_key)
        _check_redis_url(settings.redis_url)
        unknown = unknown_names(env)
        if unknown:
            (warn or _to_stderr)(
                f"[token-journey] not a setting, ignored: {', '.join(unknown)} (see docs/configuration.md)")
        return settings


def names() -> tuple[str, ...]:
    """Every setting's environment variable, in the dataclass' order."""
    return tuple(Settings.env_name(f.name) for f in fields(Settings))


def unknown_names(environ: Mapping[str, str]) -> list[str]:
    """``TOKEN_JOURNEY_*`` names in ``environ`` that are neither a setting nor a test-only knob."""
    known = set(names()) | set(TEST_ONLY)
    return sorted(name for name in environ if name.startswith(PREFIX) and name not in known)


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _parse(name: str, raw: str, kind: Any) -> Any:
    kind = kind if isinstance(kind, str) else kind.__name__
    if kind == "bool":
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise SettingsError(f"{name}={raw!r} is not a switch: use 1 or 0")
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{name}={raw!r} is not a whole number") from None
        if value < 0:
            raise SettingsError(f"{name}={raw!r} must be 0 or more")
        return value
    if kind == "float":
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{name}={raw!r} is not a number") from None
        if not value >= 0:  # also NaN
            raise SettingsError(f"{name}={raw!r} must be 0 or more")
        return value
    return raw


def _check_device(device: str) -> None:
    """The device's spelling (whether it is available is checked when a model is placed on it)."""
    kind, _, index = device.lower().partition(":")
    if device and not (kind in ("cpu", "mps") and not index or kind == "cuda" and (not index or index.isdigit())):
        raise SettingsError(f"TOKEN_JOURNEY_DEVICE={device!r} is not a device; use cpu, cuda, cuda:N or mps")


# A key the teacher sets goes into a link: URL-safe characters, and long enough not to be guessed.
_MIN_TEACHER_KEY_CHARS = 16
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _check_teacher_key(key: str) -> None:
    """The key's shape, never its value (an error line must not print the secret)."""
    if key and (len(key) < _MIN_TEACHER_KEY_CHARS or not set(key) <= _KEY_CHARS):
        raise SettingsError(f"TOKEN_JOURNEY_TEACHER_KEY is not a usable key: use at least {_MIN_TEACHER_KEY_CHARS} "
                            "letters, digits, '-' or '_'")


def _check_redis_url(url: str) -> None:
    if url and not url.startswith(("redis://", "rediss://", "unix://")):
        raise SettingsError(f"TOKEN_JOURNEY_REDIS_URL={url!r} is not a Redis address; use redis://host:port/db")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# --- the settings this process started with ---------------------------------------------------

_ACTIVE: Settings | None = None


def use(settings: Settings) -> None:
    """Make ``settings`` the process' settings (``serving.startup.start`` calls it once)."""
    global _ACTIVE
    _ACTIVE = settings


def active() -> Settings:
    """The settings start-up used; before start-up, the environment's (read once, then kept)."""
    global _ACTIVE
    if _ACTIVE is None:
        _ACTIVE = Settings.from_env()
    return _ACTIVE


def replace(**changes: Any) -> Settings:
    """A copy of the active settings with ``changes`` (tests)."""
    return dataclasses.replace(active(), **changes)
