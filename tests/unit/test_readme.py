"""The README a teacher reads: short, with the two set-up commands exactly, and docs whose links work."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_README_BYTES = 10 * 1024  # read in five minutes

# What a fresh machine runs, word for word: change these only together with the README.
SET_UP_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/streamlit run app.py",
    "bash scripts/test.sh",
)

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def user_docs() -> list[Path]:
    """Every Markdown file a user reads: the README, docs/ and deploy/."""
    return [README, *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "deploy").rglob("*.md"))]


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code (a TOML ``[models]`` is not a link)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    """Every link and image target in Markdown prose.

    Example: links("see [the docs](docs/a.md#top) and `[x](y)`") -> ["docs/a.md#top"]
    """
    return LINK.findall(prose(text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading.

    Example: slug("Every core of one machine: `scripts/serve.sh`") -> "every-core-of-one-machine-scriptsservesh"
    """
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8")))}


def test_the_helpers_find_links_and_anchors() -> None:
    assert links("see [the docs](docs/a.md#top), ![pic](p.png \"t\") and `[x](y)`\n```\n[a](b)\n```\n") == [
        "docs/a.md#top", "p.png"]
    assert slug("Every core of one machine: `scripts/serve.sh`") == "every-core-of-one-machine-scriptsservesh"
    assert slug("Your own Hugging Face models") == "your-own-hugging-face-models"


def test_the_readme_reads_in_five_minutes() -> None:
    size = len(README.read_bytes())
    assert size <= MAX_README_BYTES, f"README.md is {size:,} bytes; the limit is {MAX_README_BYTES:,}"


def test_the_readme_gives_the_two_set_up_commands_exactly() -> None:
    lines = {line.strip() for line in README.read_text(encoding="utf-8").splitlines()}
    for command in SET_UP_COMMANDS:
        assert command in lines, f"README.md must give this command on a line of its own: {command}"


def test_every_relative_link_in_the_docs_resolves() -> None:
    docs = user_docs()
    assert {README, ROOT / "docs/architecture.md", ROOT / "deploy/README.md"} <= set(docs)
    checked, broken = 0, []
    for doc in docs:
        for target in links(doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not a file here
                continue
            file_part, _, anchor = target.partition("#")
            path = (doc.parent / file_part).resolve() if file_part else doc
            checked += 1
            if not path.is_file():
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert checked >= 10, checked  # the README alone links the picture and five docs
    assert not broken, broken


def test_no_history_where_a_user_reads() -> None:
    """Earlier trees live in git: the README carries no dates, and the performance page one,
    at its top ("Measured <date> on ...")."""
    assert not DATE.findall(README.read_text(encoding="utf-8"))
    performance = (ROOT / "docs/performance.md").read_text(encoding="utf-8")
    dates = DATE.findall(performance)
    assert len(dates) == 1 and f"Measured {dates[0]} on" in performance, dates
    for doc in user_docs():
        text = doc.read_text(encoding="utf-8")
        for phrase in ("this round", "a later session", "before this round", "same session"):
            assert phrase not in text.lower(), (doc.name, phrase)
