"""The teacher key, the pass that every teacher action needs, and the class code.

The key is random (192 bits) for every start unless ``TOKEN_JOURNEY_TEACHER_KEY`` is set; the
launcher draws it once (``new_teacher_key``) and hands the same one to every replica. The class
code, which the student link carries, is derived from the key (HMAC), so every replica and the
link printer agree on it without talking to each other, and it tells nothing about the key.

    key = new_teacher_key()
    code = class_code(key)                       # e.g. "K7QM4X"
    teacher = authorize(given_from_the_url, key) # TeacherPass, or ClassError("not_teacher")

Example: class_code("x" * 32) -> always the same 6 characters
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Final

from serving.classroom.rules import ClassError

KEY_BYTES: Final = 24  # 192 bits (the issue asks for at least 128)
MIN_KEY_CHARS: Final = 16  # a key the teacher sets: shorter ones are guessable (Settings refuses them)
CODE_ALPHABET: Final = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: read out loud, typed on a phone
CODE_CHARS: Final = 6  # 31**6 ~ 8.9e8 codes: a code names a class, the key guards it


def new_teacher_key() -> str:
    """A fresh random key, URL-safe (32 characters)."""
    return secrets.token_urlsafe(KEY_BYTES)


def class_code(teacher_key: str) -> str:
    """The class code for this key: HMAC-SHA256(key, label) read in CODE_ALPHABET."""
    digest = hmac.new(teacher_key.encode(), b"token-journey class code", hashlib.sha256).digest()
    number = int.from_bytes(digest[:8], "big")
    chars = []
    for _ in range(CODE_CHARS):
        number, digit = divmod(number, len(CODE_ALPHABET))
        chars.append(CODE_ALPHABET[digit])
    return "".join(chars)


def is_teacher_key(given: object, teacher_key: str) -> bool:
    """Constant-time comparison; anything that is not a non-empty string is not the key."""
    if not isinstance(given, str) or not given or not teacher_key:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), teacher_key.encode())


@dataclass(frozen=True)
class TeacherPass:
    """Proof, inside the server, that the teacher key was shown. Teacher methods of a store take
    one as their first argument; only ``authorize`` makes one (the UI keeps it in the teacher's
    session, never in a widget or a URL)."""

    code: str
    _token: object = field(repr=False, compare=False)


_TOKEN: Final = object()


def authorize(given: object, teacher_key: str) -> TeacherPass:
    """A pass for the class of ``teacher_key`` if ``given`` is that key; else ClassError("not_teacher")."""
    if not is_teacher_key(given, teacher_key):
        raise ClassError("not_teacher")
    return TeacherPass(class_code(teacher_key), _TOKEN)


def check_pass(teacher: object, code: str) -> None:
    """Raise ClassError("not_teacher") unless ``teacher`` is a pass ``authorize`` made for ``code``."""
    if not (isinstance(teacher, TeacherPass) and teacher._token is _TOKEN and teacher.code == code):
        raise ClassError("not_teacher")


def pass_code(teacher: object) -> str:
    """The class code of a real ``TeacherPass``; ClassError("not_teacher") for anything else."""
    if not (isinstance(teacher, TeacherPass) and teacher._token is _TOKEN):
        raise ClassError("not_teacher")
    return teacher.code
