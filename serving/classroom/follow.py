"""A student's poll, without Streamlit: what the student page's timed fragment calls each tick.

Each tick reads the class' version (one small read) and, only when it moved, the whole state;
every ``HEARTBEAT_S`` it also says "still here". So 60 followers of an idle teacher cost 60
small reads per ``POLL_S`` and 6 writes a second, and a change reaches each of them within
``POLL_S`` plus one rerun (docs/class_mode.md).

    poll = StudentPoll(code, session_id)          # kept in the student's session state
    state = poll.tick(store, time.monotonic())    # None: nothing new; else the new ClassState

Example: StudentPoll("K7QM4X", "0f3c...").tick(store, 0.0) -> ClassState(version=1, ...) (the first tick)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from serving.classroom.rules import ClassState
from serving.classroom.store import ClassStore

POLL_S: Final = 1.5  # the fragment's run_every: a change shows within 2 s (1.5 s + one rerun)
HEARTBEAT_S: Final = 10.0  # well inside the 30 s joined window, so one lost beat costs nothing


@dataclass
class StudentPoll:
    """The state of one student's polling (plain values: it lives in the session state)."""

    code: str
    session: str
    seen_version: int = 0
    last_heartbeat: float = -math.inf

    def tick(self, store: ClassStore, now: float) -> ClassState | None:
        """One poll; ``now`` from a monotonic clock. Raises ``ClassError`` (``not_joined``: join
        again; ``no_class``: the class ended) like the store."""
        if now - self.last_heartbeat >= HEARTBEAT_S:
            store.heartbeat(self.code, self.session)
            self.last_heartbeat = now
        if store.version(self.code) == self.seen_version:
            return None
        state = store.state(self.code)
        self.seen_version = state.version
        return state
