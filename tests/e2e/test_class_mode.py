"""Class mode in real Chromium (issue #45), short: one teacher and two students on one classroom
server (scripts/classroom.sh, one process). The launcher prints both links; the teacher's page
drops the key from the address; the students follow the teacher to another page, one steps away
and back; a predict-the-next-token question is answered by both and revealed; a student link
with a forged key leads nothing. (The five-student run on serve.sh's replicas comes later.)

Follow times are printed; the assertion on them is generous (the machine is shared)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from serving.classroom.keys import class_code
from tests.e2e.conftest import ROOT, _free_port, serve
from tests.e2e.class_helpers import FOLLOW_BOUND_MS
from tests.e2e.class_helpers import ms_until_page as _on_page
from tests.e2e.class_helpers import open_page as _open
from tests.e2e.helpers import assert_no_error, wait_for_app

pytestmark = pytest.mark.e2e

KEY = "e2e-Teacher-Key_0123456789abcdef"
CODE = class_code(KEY)


@pytest.fixture(scope="module")
def class_url() -> Iterator[str]:
    port = _free_port()
    env = {"TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1,localhost", "TOKEN_JOURNEY_TEACHER_KEY": KEY,
           "PYTHON": os.environ.get("PYTHON", str(ROOT / ".venv" / "bin" / "python"))}
    command = ["bash", str(ROOT / "scripts" / "classroom.sh"), "--replicas", "1", "--address", "127.0.0.1",
               "--port", str(port)]
    with serve(command, port, "server_class_mode.log", env) as url:
        worker = os.environ.get("PYTEST_XDIST_WORKER")  # serve() names the log per xdist worker
        name = f"server_class_mode.{worker}.log" if worker else "server_class_mode.log"
        log = (ROOT / "tests" / "e2e" / name).read_text()
        assert f"Teacher link: {url}/?teacher={KEY}\n" in log
        assert f"Student link: {url}/?class={CODE}\n" in log
        yield url


def test_one_teacher_two_students(browser: Browser, class_url: str) -> None:
    teacher = _open(browser, f"{class_url}/?teacher={KEY}")
    expect(teacher.get_by_text("Lead the class")).to_be_visible()
    assert "teacher=" not in teacher.url and KEY not in teacher.inner_text("body")
    a = _open(browser, f"{class_url}/?class={CODE}")
    b = _open(browser, f"{class_url}/?class={CODE}")
    for student in (a, b):
        expect(student.get_by_text("Following the teacher")).to_be_visible()
        assert_no_error(student)
    expect(teacher.get_by_text(re.compile(r"2\s*joined"))).to_be_visible(timeout=5000)

    teacher.get_by_text("Lead the class").click()
    wait_for_app(teacher)
    teacher.locator('[data-testid="stSidebar"] a[href*="multi_head_attention"]').click()
    wait_for_app(teacher)
    print(f"follow (page change): A {_on_page(a, 'multi_head_attention'):.0f} ms, "
          f"B {_on_page(b, 'multi_head_attention'):.0f} ms")

    b.get_by_role("button", name="Explore on my own").click()
    expect(b.get_by_text("Exploring on your own")).to_be_visible()
    teacher.locator('[data-testid="stSidebar"] a[href*="logits_sampling"]').click()
    wait_for_app(teacher)
    print(f"follow (second change): A {_on_page(a, 'logits_sampling'):.0f} ms")
    b.wait_for_timeout(2500)
    assert "/multi_head_attention" in b.url  # exploring: B stays
    b.get_by_role("button", name="Follow the teacher").click()
    print(f"back to following: B {_on_page(b, 'logits_sampling'):.0f} ms")

    teacher.get_by_role("button", name=re.compile("predict the next token")).click()
    wait_for_app(teacher)
    expect(a.get_by_text("Question 1", exact=True)).to_be_visible(timeout=FOLLOW_BOUND_MS)
    expect(b.get_by_text("Question 1", exact=True)).to_be_visible(timeout=FOLLOW_BOUND_MS)
    a.locator(".stRadio label").filter(has_text=re.compile(r"^Paris$")).click()
    a.get_by_role("button", name="Send my answer").click()
    wait_for_app(a)
    b.get_by_label("…or type your own token").fill("Rome")
    b.get_by_role("button", name="Send my answer").click()
    wait_for_app(b)
    expect(b.get_by_text("Your answer: Rome")).to_be_visible()
    expect(teacher.get_by_text(re.compile(r"2\s*answers"))).to_be_visible(timeout=5000)
    teacher.get_by_role("button", name="Show the results").click()
    wait_for_app(teacher)
    for page in (teacher, a, b):
        expect(page.get_by_text("Results: 2 answers")).to_be_visible(timeout=FOLLOW_BOUND_MS)
        expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible()
        assert_no_error(page)

    forged = _open(browser, f"{class_url}/?class={CODE}&teacher={KEY[:-1]}x")
    expect(forged.get_by_text("Only the teacher can do this.")).to_be_visible()
    assert "teacher=" not in forged.url
    expect(forged.get_by_text("Lead the class")).to_have_count(0)
