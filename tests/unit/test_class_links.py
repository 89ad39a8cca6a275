"""The teacher key, the class code, the two links, the QR code and the link printer's CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from serving.classroom import keys, links
from serving.classroom.rules import ClassError
from serving.settings import Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]
KEY = "Zq0-teacher_key_for_tests_12345"


def test_a_new_key_has_at_least_128_random_bits() -> None:
    drawn = [keys.new_teacher_key() for _ in range(200)]
    assert len(set(drawn)) == 200
    for key in drawn:
        assert len(key) == 32 and set(key) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert keys.KEY_BYTES * 8 >= 128
    Settings.from_env({"TOKEN_JOURNEY_TEACHER_KEY": drawn[0]})  # a drawn key is a valid setting


def test_the_class_code_is_short_stable_and_readable() -> None:
    code = keys.class_code(KEY)
    assert code == keys.class_code(KEY) and len(code) == keys.CODE_CHARS
    assert set(code) <= set(keys.CODE_ALPHABET) and not set(code) & set("01ILO")
    assert keys.class_code(KEY + "x") != code
    assert KEY not in code


def test_only_the_key_authorizes() -> None:
    teacher = keys.authorize(KEY, KEY)
    assert teacher.code == keys.class_code(KEY) and KEY not in repr(teacher)
    for given in ("", KEY[:-1], KEY + " ", KEY.upper(), None, 0, [KEY], KEY.encode(), "é" * 31):
        with pytest.raises(ClassError) as error:
            keys.authorize(given, KEY)
        assert error.value.code == "not_teacher"
    assert not keys.is_teacher_key(KEY, "")  # no key set: nobody is the teacher
    with pytest.raises(ClassError):
        keys.pass_code(keys.TeacherPass(teacher.code, object()))


def test_the_key_is_compared_in_constant_time() -> None:
    source = (ROOT / "serving" / "classroom" / "keys.py").read_text(encoding="utf-8")
    assert "hmac.compare_digest(" in source and "given == teacher_key" not in source


def test_the_student_link_carries_the_code_and_never_the_key() -> None:
    teacher = links.teacher_link("http://10.0.0.5:8501", KEY)
    student = links.student_link("http://10.0.0.5:8501/", keys.class_code(KEY))
    assert teacher == f"http://10.0.0.5:8501/?teacher={KEY}"
    assert student == f"http://10.0.0.5:8501/?class={keys.class_code(KEY)}"
    assert KEY not in student
    assert parse_qs(urlsplit(links.teacher_link("https://tj.school.example/class", KEY)).query) == {"teacher": [KEY]}
    for bad in ("10.0.0.5:8501", "ftp://h", "javascript:alert(1)", "http://"):
        with pytest.raises(ValueError):
            links.student_link(bad, "ABCDEF")


def test_the_qr_code_is_the_student_link() -> None:
    if not os.environ.get("CI"):
        pytest.importorskip("segno")
    import segno

    url = links.student_link("http://192.168.1.20:8501", keys.class_code(KEY))
    text = links.qr_text(url)
    assert text.count("\n") >= 10 and len({len(line) for line in text.splitlines()}) == 1  # a square block
    svg = links.qr_svg(url)
    assert svg.startswith("<svg") and "</svg>" in svg
    # The text drawing is the very matrix segno encodes for the link (2 rows per line when compact).
    matrix = segno.make(url, error="m", micro=False).matrix
    assert len(text.splitlines()) == (len(matrix) + 4 + 1) // 2


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_JOURNEY_")}
    return subprocess.run([sys.executable, "-m", "serving.classroom.links", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=60)


def test_the_cli_prints_both_links_each_on_its_own_line_and_the_qr() -> None:
    if not os.environ.get("CI"):
        pytest.importorskip("segno")
    result = _cli("--url", "http://10.0.0.5:8501", "--url", "http://tj.local:8501",
                  env={"TOKEN_JOURNEY_TEACHER_KEY": KEY})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    code = keys.class_code(KEY)
    assert lines[:4] == [f"Teacher link: http://10.0.0.5:8501/?teacher={KEY}",
                         f"Student link: http://10.0.0.5:8501/?class={code}",
                         f"Teacher link: http://tj.local:8501/?teacher={KEY}",
                         f"Student link: http://tj.local:8501/?class={code}"]
    assert lines[4] == "" and len(lines) > 15  # then the QR code
    assert KEY not in "\n".join(lines[5:])


def test_the_cli_draws_a_key_and_refuses_without_one() -> None:
    drawn = _cli("--new-key")
    assert drawn.returncode == 0 and len(drawn.stdout.strip()) == 32
    missing = _cli("--url", "http://h:8501")
    assert missing.returncode == 2 and "TOKEN_JOURNEY_TEACHER_KEY" in missing.stderr and missing.stdout == ""
    weak = _cli("--url", "http://h:8501", env={"TOKEN_JOURNEY_TEACHER_KEY": "secret"})
    assert weak.returncode == 2 and "secret" not in weak.stderr  # the error never prints the key
    bad_url = _cli("--url", "h:8501", env={"TOKEN_JOURNEY_TEACHER_KEY": KEY})
    assert bad_url.returncode == 2 and KEY not in bad_url.stderr + bad_url.stdout


@pytest.mark.parametrize("key", ["short", "has space in the key!", "a" * 15, "ключ" * 8])
def test_a_weak_or_odd_key_stops_the_server_without_printing_it(key: str) -> None:
    with pytest.raises(SettingsError) as error:
        Settings.from_env({"TOKEN_JOURNEY_TEACHER_KEY": key})
    assert key not in str(error.value) and "TOKEN_JOURNEY_TEACHER_KEY" in str(error.value)


def test_the_key_never_shows_in_the_settings_repr() -> None:
    settings = Settings.from_env({"TOKEN_JOURNEY_TEACHER_KEY": KEY, "TOKEN_JOURNEY_REDIS_URL": "redis://h:6379/0"})
    assert settings.teacher_key == KEY and KEY not in repr(settings)
    with pytest.raises(SettingsError):
        Settings.from_env({"TOKEN_JOURNEY_REDIS_URL": "http://h:6379"})


def test_every_error_code_has_a_message_in_both_languages() -> None:
    import json

    from serving.classroom.rules import ERROR_CODES

    for lang in ("en", "zh"):
        strings = json.loads((ROOT / "assets" / "i18n" / f"class.{lang}.json").read_text(encoding="utf-8"))
        assert sorted(strings) == sorted(f"class.error.{code}" for code in ERROR_CODES), lang
    assert len(set(ERROR_CODES)) == len(ERROR_CODES)
