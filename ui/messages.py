"""Translated messages for errors that come from the core with English text.

The core's exceptions carry machine-readable fields (a code, a file); a page shows a message
in its own language built from those, never the core's English detail, and never an
absolute server path (only the path inside the app folder).
"""

from __future__ import annotations

from pathlib import Path

from core.engine.checkpoint import CheckpointCorruptError, CheckpointError, CheckpointMissingError
from ui.i18n import t

APP_ROOT = Path(__file__).resolve().parent.parent


def app_relative(path: object) -> str:
    """A path as shown to students: relative to the app folder, or just its name if outside.

    Example: app_relative(APP_ROOT / "assets/models/classic/bpe.json") -> "assets/models/classic/bpe.json"
    """
    if path is None:
        return "?"
    candidate = Path(str(path))
    try:
        return candidate.resolve().relative_to(APP_ROOT).as_posix()
    except (ValueError, OSError):
        return candidate.name or "?"


def checkpoint_message(error: BaseException, model_name: str = "") -> str:
    """The page's message for a model that could not be loaded: which file, and how to rebuild it."""
    preset = getattr(error, "preset", None) or model_name or "<name>"
    command = f"python -m core.training.train --preset {preset}"
    path = getattr(error, "path", None)
    if isinstance(error, CheckpointMissingError) or (isinstance(error, FileNotFoundError)
                                                     and not isinstance(error, CheckpointError)):
        key = "model.missing.file"
    elif isinstance(error, CheckpointCorruptError) or isinstance(error, CheckpointError):
        key = "model.missing.corrupt"
    else:
        key = "model.missing.unknown"
    return t(key, file=app_relative(path) if path is not None else "?", command=command)


def foreign_model_message(error: BaseException, model_name: str = "") -> str:
    """The translated reason a teacher's checkpoint cannot be served (``core.foreign.ForeignModelError``).

    Folder paths are shown by their last part only: the server's layout is not the students' business.
    """
    code = getattr(error, "code", "unknown")
    params = dict(getattr(error, "params", {}))
    if "folder" in params:
        params["folder"] = Path(params["folder"]).name or "?"
    key = f"foreign.error.{code}"
    text = t(key, name=model_name, **params)
    return text if not text.startswith("⟦") else t("foreign.error.unknown", name=model_name)
