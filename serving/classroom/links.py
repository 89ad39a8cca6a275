"""The class' two links and the student link's QR code; the launchers' link printer.

The teacher link carries the key (``?teacher=<key>``): only the teacher's own browser opens it,
and the page drops the key from the address bar once read. The student link carries only the
class code (``?class=<code>``), so a projected QR code gives nothing away.

    python -m serving.classroom.links --new-key                     # a fresh key for the launcher
    TOKEN_JOURNEY_TEACHER_KEY=... python -m serving.classroom.links --url http://10.0.0.5:8501

prints ``Teacher link: <url>`` and ``Student link: <url>``, each on its own line (one pair per
``--url``), then the student link of the first as a QR code drawn with text characters.

Example: student_link("http://h:8501/", "K7QM4X") -> "http://h:8501/?class=K7QM4X"
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from urllib.parse import urlencode, urlsplit, urlunsplit

from serving.classroom.keys import MIN_KEY_CHARS, class_code, new_teacher_key

TEACHER_PARAM = "teacher"  # the query parameter that carries the key (ui reads and drops it)
CLASS_PARAM = "class"  # the query parameter that carries the class code


def _with_query(base_url: str, params: dict[str, str]) -> str:
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) address: {base_url!r}")
    path = parts.path or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(params), ""))


def teacher_link(base_url: str, teacher_key: str) -> str:
    """Example: teacher_link("http://h:8501", "k" * 32) -> "http://h:8501/?teacher=kkk..." """
    return _with_query(base_url, {TEACHER_PARAM: teacher_key})


def student_link(base_url: str, code: str) -> str:
    """The link students open: the class code only, never the key."""
    return _with_query(base_url, {CLASS_PARAM: code})


def qr_text(data: str, compact: bool = True) -> str:
    """``data`` as a QR code in text (two modules per character cell when ``compact``), quiet zone included."""
    import segno  # loaded only when a QR code is drawn

    out = io.StringIO()
    segno.make(data, error="m", micro=False).terminal(out=out, compact=compact, border=2)
    return out.getvalue()


def qr_svg(data: str, scale: int = 10, dark: str = "#000000", light: str = "#ffffff") -> str:
    """The same QR code as SVG markup (the teacher's presenter screen shows it large)."""
    import segno

    out = io.BytesIO()
    segno.make(data, error="m", micro=False).save(out, kind="svg", scale=scale, dark=dark, light=light,
                                                  xmldecl=False, svgns=True, border=2)
    return out.getvalue().decode("utf-8")


def link_lines(urls: Sequence[str], teacher_key: str) -> list[str]:
    """``Teacher link: ...`` and ``Student link: ...`` for each address."""
    code = class_code(teacher_key)
    lines = []
    for url in urls:
        lines += [f"Teacher link: {teacher_link(url, teacher_key)}", f"Student link: {student_link(url, code)}"]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m serving.classroom.links",
                                     description="Print the class' teacher and student links and a QR code.")
    parser.add_argument("--url", action="append", default=[], help="the address students type (repeatable)")
    parser.add_argument("--new-key", action="store_true", help="print a fresh random teacher key and exit")
    parser.add_argument("--no-qr", action="store_true", help="links only")
    args = parser.parse_args(argv)
    if args.new_key:
        print(new_teacher_key())
        return 0
    if not args.url:
        parser.error("--url is required (or --new-key)")
    from serving.settings import Settings, SettingsError

    try:
        key = Settings.from_env(warn=lambda line: None).teacher_key
    except SettingsError as error:
        print(f"[token-journey] {error}", file=sys.stderr)
        return 2
    if len(key) < MIN_KEY_CHARS:
        print("[token-journey] TOKEN_JOURNEY_TEACHER_KEY is not set: the launcher draws one per start "
              "(python -m serving.classroom.links --new-key)", file=sys.stderr)
        return 2
    try:
        lines = link_lines(args.url, key)
    except ValueError as error:
        print(f"[token-journey] {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    if not args.no_qr:
        print()
        print(qr_text(student_link(args.url[0], class_code(key))), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
