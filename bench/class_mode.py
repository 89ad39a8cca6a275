"""What class mode costs and how fast it is (issue #45 item 6), against the replicated launcher.

Every tab is a protocol-level client (``bench/proto_client.py``: Streamlit's own websocket
protocol, no browser) that does what a browser tab does: it sends the address' query with every
run (the student link's ``?class=<code>``, the teacher link's ``?teacher=<key>``, which the page
then drops: ``page_info_changed``), and it reruns every timed fragment the server announces
(``auto_rerun``) on its interval, as the browser's timer does: the students' poll, the teacher's
counts. A student's answer is the answer form's own widgets (``class_answer_<qid>_typed``, then the
form's submit button) sent in one run, as Streamlit's frontend sends a form.

Measured, on one server (``scripts/serve.sh --replicas R`` started here on free loopback ports,
or ``--url`` with ``--teacher-key`` and ``--pid``):

1. class mode off: N plain tabs (no class link) open and idle for ``--idle`` s: the CPU of every
   server process (replicas, HAProxy, supervisor) in % of one core;
2. class mode on: a teacher who leads and N students joined and following, teacher idle, the
   same window: the same CPU figure (target: at most 10 % of one core more than off);
3. the teacher changes the prompt ``--changes`` times: per change and student, the time from the
   teacher's change being sent to that student's page having applied it (the student's poll
   found the new view and its app rerun finished: ``FINISHED_EARLY_FOR_RERUN`` then the run's
   ``script_finished``); p95 target 2 s;
4. the teacher asks "predict the next token"; each student answers once at a random moment of
   ``--answer-window`` s (not before its page shows the question): the answers the teacher's
   screen counts (target: all N) and each answer's acknowledgement (the submit's run finished,
   the page saying "Your answer"); p95 target 500 ms.

Run (the issue's figures; a quiet machine):
  .venv/bin/python bench/class_mode.py --students 60 --replicas 2
  .venv/bin/python bench/class_mode.py --students 60 --redis-url redis://127.0.0.1:6379/0
  .venv/bin/python bench/class_mode.py --url http://127.0.0.1:8501 --teacher-key "$KEY" --pid "$PID"
Smoke (proves the bench works, no figure): --students 5 --idle 10 --changes 2
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import re
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg  # noqa: E402
from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: E402

from bench.classroom import Server, browser_cookie, cpu_seconds, pct, settle, start_server, tree  # noqa: E402
from bench.proto_client import MessageCache, RunResult, Session, Widget  # noqa: E402

PROMPTS = ("The capital of France is", "The capital of Japan is")  # the teacher alternates them
ANSWERS = ("Paris", "Rome", "London")
CPU_TARGET_PCT = 10.0
FOLLOW_TARGET_S = 2.0
ACK_TARGET_S = 0.5
COUNTED = re.compile(r"\*\*(\d+)\*\* answers")  # the teacher's "**n** answers from m students joined"


# --- pure helpers (tests/unit/test_bench_class_mode.py) -----------------------------------------


def follow_delays(changes: Sequence[float], applied: Sequence[float], window: float) -> list[float | None]:
    """For each teacher change (its send time), the delay until this student next applied a view,
    before the next change and within ``window`` s; None when it never did (a miss).

    Example: follow_delays([10.0, 20.0], [11.2, 12.0, 21.5], 5.0) -> [1.2, 1.5]
    """
    delays: list[float | None] = []
    for i, start in enumerate(changes):
        end = min(start + window, changes[i + 1] if i + 1 < len(changes) else math.inf)
        after = [t for t in applied if start < t <= end]
        delays.append(min(after) - start if after else None)
    return delays


def cpu_pct(cpu_s: float, wall_s: float) -> float:
    """CPU seconds over a wall-clock window as % of one core. Example: cpu_pct(3.0, 30.0) -> 10.0"""
    return 100.0 * cpu_s / wall_s if wall_s > 0 else float("nan")


def table(rows: Sequence[tuple[str, str, str, str]]) -> str:
    """A Markdown table: measure | class mode off | class mode on | target."""
    lines = ["| measure | class mode off | class mode on | target |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


# --- a browser tab, protocol level ---------------------------------------------------------------


@dataclass
class Recorder(MessageCache):
    """The tab's message cache, also noting what a browser acts on: timed fragments, the address'
    new query, app reruns a fragment asked for, and the texts drawn (Markdown and alerts)."""

    auto: dict[str, float] = field(default_factory=dict)  # fragment id -> interval (s)
    app_reruns: int = 0
    query: str | None = None
    texts: list[str] = field(default_factory=list)

    def receive(self, data: bytes) -> ForwardMsg:
        msg = super().receive(data)
        kind = msg.WhichOneof("type")
        if kind == "auto_rerun" and msg.auto_rerun.interval > 0:
            self.auto[msg.auto_rerun.fragment_id] = float(msg.auto_rerun.interval)
        elif kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self.app_reruns += 1
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            which = element.WhichOneof("type")
            if which == "markdown":
                self.texts.append(element.markdown.body)
            elif which == "alert":
                self.texts.append(element.alert.body)
        return msg


@dataclass
class Tab:
    """One browser tab: a session, its timers, one run at a time (as one websocket does)."""

    url: str
    query: str
    timeout: float = 30.0
    recorder: Recorder = field(default_factory=Recorder)
    session: Session = field(init=False)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    applied: list[float] = field(default_factory=list)  # perf_counter when a poll's app rerun finished
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.session = Session(self.url, query_string=self.query, cache=self.recorder)

    async def open(self) -> None:
        self.session.cookie = await asyncio.to_thread(browser_cookie, self.url)
        async with self.lock:
            await self.session.open(self.timeout)
            self._after_run()

    def _after_run(self) -> None:
        if self.recorder.query is not None:  # the page changed the address (the teacher key dropped)
            self.session.query_string = self.recorder.query

    async def run(self, fragment_id: str = "", widget: Widget | None = None,
                  state: WidgetState | None = None) -> tuple[RunResult, list[str]]:
        """One run (a fragment's timer, a widget's new value, or a full run); the texts it drew."""
        async with self.lock:
            before = self.recorder.app_reruns
            self.recorder.texts = []
            if not fragment_id and (widget is None or not widget.fragment_id):
                self.recorder.auto.clear()  # a full run: the browser drops its timers, the run sets them again
            if widget is not None and state is not None:
                result = await self.session.set_widget(widget, state, self.timeout)
            else:
                result = await self.session.rerun(fragment_id, self.timeout)
            self._after_run()
            if self.recorder.app_reruns > before:
                self.applied.append(time.perf_counter())
            if not result.ok:
                self.errors.append(f"{result.status}: {result.exceptions[:1]}")
            return result, list(self.recorder.texts)

    async def timers(self, until: Callable[[], bool]) -> None:
        """Rerun each timed fragment on its interval, as the browser's timers do, until ``until()``."""
        due: dict[str, float] = {}
        while not until():
            now = time.perf_counter()
            for fragment, interval in list(self.recorder.auto.items()):
                due.setdefault(fragment, now + interval)
            if not due:
                await asyncio.sleep(0.2)
                continue
            for gone in [f for f in due if f not in self.recorder.auto]:
                del due[gone]
            if not due:
                continue
            fragment = min(due, key=due.__getitem__)
            await asyncio.sleep(max(0.0, min(due[fragment] - now, 0.5)))
            if time.perf_counter() < due[fragment] or until():
                continue
            try:
                await self.run(fragment)
            except Exception as error:  # a dropped or silent session: counted, the others go on
                self.errors.append(f"timer: {error!r}"[:200])
            due[fragment] = max(due[fragment] + self.recorder.auto.get(fragment, 1.0), time.perf_counter())

    def widget(self, key: str | re.Pattern[str]) -> Widget | None:
        for w in self.session.widgets.values():
            if (w.key == key) if isinstance(key, str) else key.fullmatch(w.key):
                return w
        return None

    async def close(self) -> None:
        try:
            await self.session.close()
        except OSError:
            pass


async def open_tabs(url: str, queries: Sequence[str], at_once: int = 8) -> list[Tab]:
    """Open the tabs, ``at_once`` at a time (a class joins over seconds, not in one instant)."""
    gate = asyncio.Semaphore(at_once)
    tabs = [Tab(url, q) for q in queries]

    async def one(tab: Tab) -> None:
        async with gate:
            await tab.open()

    await asyncio.gather(*(one(tab) for tab in tabs))
    return tabs


# --- the phases ----------------------------------------------------------------------------------


@dataclass
class Figures:
    cpu_off: float = float("nan")
    cpu_on: float = float("nan")
    follow: list[float | None] = field(default_factory=list)
    acks: list[float] = field(default_factory=list)
    acked: int = 0
    counted: int = -1
    errors: list[str] = field(default_factory=list)


async def idle_cpu(pids: Callable[[], list[int]], seconds: float) -> float:
    start_cpu, start = cpu_seconds(pids()), time.perf_counter()
    await asyncio.sleep(seconds)
    return cpu_pct(cpu_seconds(pids()) - start_cpu, time.perf_counter() - start)


async def measure(url: str, key: str, code: str, n: int, pids: Callable[[], list[int]], idle: float,
                  changes: int, change_every: float, answer_window: float, seed: int) -> Figures:
    figures = Figures()
    rng = random.Random(seed)
    stop = False

    def stopped() -> bool:
        return stop

    # 1. class mode off: plain tabs, idle (once the replicas have gone quiet: models loaded, the
    # first visits' background work done).
    plain = await open_tabs(url, [""] * n)
    plain_timers = [asyncio.create_task(tab.timers(stopped)) for tab in plain]
    await asyncio.sleep(3)
    if pids():
        await asyncio.to_thread(settle, pids, 180.0)
    figures.cpu_off = await idle_cpu(pids, idle) if pids() else float("nan")
    stop = True
    await asyncio.gather(*plain_timers)
    for tab in plain:
        await tab.close()
    stop = False

    # 2. class mode on: the teacher leads, N students follow, the teacher idle.
    teacher = (await open_tabs(url, [f"teacher={key}"]))[0]
    lead = teacher.widget("class_lead")
    if lead is None:
        raise RuntimeError("the teacher's page shows no 'Lead the class' switch: is the key right?")
    await teacher.run(widget=lead, state=WidgetState(id=lead.id, bool_value=True))
    students = await open_tabs(url, [f"class={code}"] * n)
    tabs = [teacher, *students]
    timers = [asyncio.create_task(tab.timers(stopped)) for tab in tabs]
    await asyncio.sleep(5)  # every student's first poll, the lead's view applied
    figures.cpu_on = await idle_cpu(pids, idle) if pids() else float("nan")

    # 3. the teacher changes the prompt; each student applies it.
    sent: list[float] = []
    for i in range(changes):
        prompt = next((w for w in teacher.session.widgets.values()
                       if w.kind == "text_area" and w.key.endswith("prompt")), None)
        if prompt is None:
            raise RuntimeError("the teacher's page shows no prompt")
        sent.append(time.perf_counter())
        await teacher.run(widget=prompt, state=WidgetState(id=prompt.id, string_value=PROMPTS[(i + 1) % 2]))
        await asyncio.sleep(max(0.0, sent[-1] + change_every - time.perf_counter()))
    for student in students:
        figures.follow += follow_delays(sent, student.applied, change_every)

    # 4. a question; every student answers once within the window.
    ask = teacher.widget("class_ask_next")
    if ask is None:
        raise RuntimeError("the teacher's page shows no 'predict the next token' button")
    asked = time.perf_counter()
    await teacher.run(widget=ask, state=WidgetState(id=ask.id, trigger_value=True))
    typed_key = re.compile(r"class_answer_(\d+)_typed")

    async def answer(student: Tab) -> None:
        when = asked + rng.uniform(0.0, answer_window * 0.8)
        while (typed := student.widget(typed_key)) is None or time.perf_counter() < when:
            if time.perf_counter() > asked + answer_window * 3:
                student.errors.append("the question never showed")
                return
            await asyncio.sleep(0.05)
        form = f"class_answer_{typed_key.fullmatch(typed.key).group(1)}"  # type: ignore[union-attr]
        submit = next((w for w in student.session.widgets.values() if w.kind == "button"
                       and w.proto.is_form_submitter and w.proto.form_id == form), None)
        if submit is None:
            student.errors.append("no submit button")
            return
        text = rng.choice(ANSWERS)
        async with student.lock:  # the form's values go with the submit, in one run
            student.session.states[typed.id] = WidgetState(id=typed.id, string_value=text)
        result, texts = await student.run(widget=submit, state=WidgetState(id=submit.id, trigger_value=True))
        figures.acks.append(result.seconds)
        if result.ok and any("Your answer" in t and text in t for t in texts):
            figures.acked += 1

    await asyncio.gather(*(answer(student) for student in students))
    await asyncio.sleep(2)  # the teacher's counts are polled
    _, texts = await teacher.run()  # the teacher's page, drawn afresh: its counts
    found = [int(m.group(1)) for t in texts if (m := COUNTED.search(t))]
    figures.counted = found[0] if found else -1

    stop = True
    await asyncio.gather(*timers)
    for tab in tabs:
        figures.errors += tab.errors
        await tab.close()
    return figures


def report(n: int, replicas: str, figures: Figures) -> str:
    follow = [d for d in figures.follow if d is not None]
    missed = len(figures.follow) - len(follow)
    p95 = pct(follow, 0.95) if not missed else float("inf")
    ack95 = pct(figures.acks, 0.95)
    extra = figures.cpu_on - figures.cpu_off
    rows = [
        (f"server CPU, {n} tabs idle (% of one core)", f"{figures.cpu_off:.1f}", f"{figures.cpu_on:.1f} "
         f"({extra:+.1f})", f"on − off ≤ {CPU_TARGET_PCT:.0f}: {verdict(extra <= CPU_TARGET_PCT)}"),
        (f"teacher's change → each of {n} applied, p50 / p95 / max (s)", "—",
         f"{pct(follow, 0.5):.2f} / {p95:.2f} / {max(follow, default=float('nan')):.2f}"
         + (f", {missed} missed" if missed else ""), f"p95 ≤ {FOLLOW_TARGET_S:.0f}: {verdict(p95 <= FOLLOW_TARGET_S)}"),
        (f"answers counted (of {n})", "—", str(figures.counted), f"all: {verdict(figures.counted == n)}"),
        ("answer acknowledged, p50 / p95 (ms)", "—",
         f"{1000 * pct(figures.acks, 0.5):.0f} / {1000 * ack95:.0f} ({figures.acked}/{n} said so)",
         f"p95 ≤ {1000 * ACK_TARGET_S:.0f}: {verdict(ack95 <= ACK_TARGET_S and figures.acked == n)}"),
    ]
    lines = [f"class mode, {n} students, {replicas}", table(rows)]
    if "Redis" in replicas:
        lines.append("(server CPU: the replicas, HAProxy and the supervisor; redis-server's own is not counted)")
    if figures.errors:
        lines.append(f"errors ({len(figures.errors)}): " + "; ".join(sorted(set(figures.errors))[:5]))
    return "\n".join(lines)


def main() -> None:
    from serving.classroom.keys import class_code

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of each idle CPU window")
    parser.add_argument("--changes", type=int, default=5, help="the teacher's prompt changes")
    parser.add_argument("--change-every", type=float, default=5.0)
    parser.add_argument("--answer-window", type=float, default=10.0)
    parser.add_argument("--redis-url", default="", help="TOKEN_JOURNEY_REDIS_URL for the started server")
    parser.add_argument("--url", default="", help="a running class server (give --teacher-key and --pid)")
    parser.add_argument("--teacher-key", default="", help="with --url: the key of its Teacher link")
    parser.add_argument("--pid", type=int, default=0, help="with --url: the server's process (its tree's CPU)")
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()

    server: Server | None = None
    key = args.teacher_key or secrets.token_urlsafe(24)
    if args.url:
        if not args.teacher_key:
            parser.error("--url needs --teacher-key")
        url = args.url.rstrip("/")
        name = url
        pids: Callable[[], list[int]] = (lambda: tree(args.pid)) if args.pid else (lambda: [])
    else:
        env = {"TOKEN_JOURNEY_TEACHER_KEY": key, "TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1",
               "TOKEN_JOURNEY_REDIS_URL": args.redis_url}
        server = start_server("replicated", args.replicas, env)
        url, name = server.url, f"serve.sh --replicas {args.replicas}, " + ("Redis" if args.redis_url else "embedded store")
        pids = server.pids
        print(f"started {name} on {url} in {server.started_s:.1f} s", flush=True)
    try:
        figures = asyncio.run(measure(url, key, class_code(key), args.students, pids, args.idle, args.changes,
                                      args.change_every, args.answer_window, args.seed))
    finally:
        if server is not None:
            server.stop()
    print(report(args.students, name, figures))


if __name__ == "__main__":
    main()
