"""Which foreign model folders the teacher serves: names -> folders, fixed at server start.

Students never type a path: they pick a *name* in the sidebar. The teacher names the folders
when starting the server, in either (or both) of two ways; the environment wins on a clash
(the server reads the variables and hands their values to ``load_catalogue``; core reads no
environment):

    TOKEN_JOURNEY_MODELS="gpt2=/models/gpt2,qwen=/models/Qwen2.5-0.5B" streamlit run app.py

    # models.toml next to app.py
    [models]
    gpt2 = "/models/gpt2"
    qwen = "/models/Qwen2.5-0.5B"

A relative folder is relative to the app folder. Names are 1-40 letters, digits, ``.``, ``_``
or ``-`` and may not reuse a built-in name. A bad entry is skipped and reported in
``Catalogue.problems`` (printed to the server log), never fatal.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ENV_VAR = "TOKEN_JOURNEY_MODELS"  # named in problem messages: the teacher knows the variable, not this module
APP_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TOML = APP_ROOT / "models.toml"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass(frozen=True)
class Catalogue:
    """The configured foreign models (in order) and the entries that were refused."""

    models: dict[str, Path] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def _folder(raw: str) -> Path:
    path = Path(raw).expanduser()
    return path if path.is_absolute() else APP_ROOT / path


def _add(models: dict[str, Path], problems: list[str], name: str, raw: object, source: str,
         reserved: tuple[str, ...]) -> None:
    name = name.strip()
    if not NAME.match(name):
        problems.append(f"{source}: model name {name!r} is not 1-40 letters, digits, '.', '_' or '-'")
    elif name in reserved:
        problems.append(f"{source}: {name!r} is a built-in model name; pick another")
    elif not isinstance(raw, str) or not raw.strip():
        problems.append(f"{source}: model {name!r} needs a folder path")
    else:
        models[name] = _folder(raw.strip())


def parse_env(value: str, reserved: tuple[str, ...] = ()) -> Catalogue:
    """``name=/path,name2=/path2`` -> Catalogue.

    Example: parse_env("gpt2=/models/gpt2").models -> {"gpt2": PosixPath("/models/gpt2")}
    """
    models: dict[str, Path] = {}
    problems: list[str] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        if not sep:
            problems.append(f"{ENV_VAR}: {item!r} is not name=/path")
            continue
        _add(models, problems, name, raw, ENV_VAR, reserved)
    return Catalogue(models, tuple(problems))


def parse_toml(text: str, source: str = "models.toml", reserved: tuple[str, ...] = ()) -> Catalogue:
    """A ``[models]`` table of ``name = "path"`` -> Catalogue."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return Catalogue({}, (f"{source}: not valid TOML ({err})",))
    table = data.get("models", {})
    if not isinstance(table, dict):
        return Catalogue({}, (f"{source}: [models] must be a table of name = \"folder\"",))
    models: dict[str, Path] = {}
    problems: list[str] = []
    for name, raw in table.items():
        _add(models, problems, str(name), raw, source, reserved)
    return Catalogue(models, tuple(problems))


def load_catalogue(env_value: str = "", toml_path: Path | None = None, reserved: tuple[str, ...] = ()) -> Catalogue:
    """``toml_path`` (None: the models.toml next to the app) first, then ``env_value`` (the
    ``name=/path,...`` text of TOKEN_JOURNEY_MODELS) on top.

    Example: load_catalogue("gpt2=/models/gpt2", Path("/nowhere.toml")).models -> {"gpt2": PosixPath("/models/gpt2")}
    """
    models: dict[str, Path] = {}
    problems: list[str] = []
    toml_path = DEFAULT_TOML if toml_path is None else Path(toml_path)
    if toml_path.is_file():
        try:
            found = parse_toml(toml_path.read_text(encoding="utf-8"), toml_path.name, reserved)
        except (OSError, UnicodeDecodeError) as err:
            found = Catalogue({}, (f"{toml_path.name}: unreadable ({err})",))
        models.update(found.models)
        problems += found.problems
    if env_value.strip():
        found = parse_env(env_value, reserved)
        models.update(found.models)
        problems += found.problems
    return Catalogue(models, tuple(problems))
