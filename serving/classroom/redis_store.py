"""The class store on Redis (``TOKEN_JOURNEY_REDIS_URL``): one class across many machines.

Same ``ClassStore`` contract as ``serving.classroom.store.SqliteStore`` (the contract tests run
both). Every change that checks before it writes is one Lua script, so it is atomic on the server
whatever the number of replicas. Keys of class ``C`` (the braces keep them in one cluster slot):

    tj:{C}:meta        hash   created, touched, version, lead, view (JSON), current, next
    tj:{C}:students    hash   session -> {"n": nickname|null, "f": 0|1, "a": last answer time}
    tj:{C}:seen        zset   session -> last heartbeat
    tj:{C}:questions   zset   qid -> qid;  tj:{C}:q:<qid> hash kind, spec, state, created
    tj:{C}:a:<qid>     hash   session -> answer

Every key expires with the class (``CLASS_TTL_S`` after the teacher's last action); ending the
class deletes them all. Times come from the caller's clock (tests move it), not Redis' own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from typing import Any

from serving.classroom import rules
from serving.classroom.keys import TeacherPass, check_pass, pass_code
from serving.classroom.rules import ClassError, ClassState, Question, Roster, Student, Tally, View

# Shared Lua helpers. ARGV[1] is always p = "tj:{C}:" and the last ARGV the cutoff (now - the class
# TTL): a class the teacher left alone longer is gone, as in the embedded store.
_LUA_COMMON = """
local p = ARGV[1]
local function touch_all(ttl)
  for _, k in ipairs({'meta', 'students', 'seen', 'questions'}) do redis.call('PEXPIRE', p .. k, ttl) end
  for _, q in ipairs(redis.call('ZRANGE', p .. 'questions', 0, -1)) do
    redis.call('PEXPIRE', p .. 'q:' .. q, ttl)
    redis.call('PEXPIRE', p .. 'a:' .. q, ttl)
  end
end
-- The class is there and the teacher acted since the cutoff (the caller's clock, last ARGV).
local function alive()
  local touched = redis.call('HGET', p .. 'meta', 'touched')
  return touched and tonumber(touched) >= tonumber(ARGV[#ARGV])
end
local function class_ttl()
  return redis.call('PTTL', p .. 'meta')
end
local function live_student(session, now, forget)
  local rec = redis.call('HGET', p .. 'students', session)
  local seen = redis.call('ZSCORE', p .. 'seen', session)
  if not rec or not seen or tonumber(seen) < now - forget then return nil end
  return cjson.decode(rec)
end
"""

# ARGV: p, now, ttl_ms, fields... (name, value pairs) -> new version, or an error code
_BUMP = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, ttl = ARGV[2], tonumber(ARGV[3])
for i = 4, #ARGV - 1, 2 do redis.call('HSET', p .. 'meta', ARGV[i], ARGV[i + 1]) end
redis.call('HSET', p .. 'meta', 'touched', now)
local v = redis.call('HINCRBY', p .. 'meta', 'version', 1)
touch_all(ttl)
return v
"""

# ARGV: p, now, ttl_ms -> 'ok'
_OPEN = _LUA_COMMON + """
local now, ttl = ARGV[2], tonumber(ARGV[3])
if redis.call('EXISTS', p .. 'meta') == 0 then
  redis.call('HSET', p .. 'meta', 'created', now, 'version', 1, 'lead', 0, 'view', '', 'current', '', 'next', 1)
end
redis.call('HSET', p .. 'meta', 'touched', now)
touch_all(ttl)
return 'ok'
"""

# ARGV: p, now, ttl_ms, kind, spec, max_questions -> qid
_ASK = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, ttl, max_q = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[6])
local qid = tonumber(redis.call('HGET', p .. 'meta', 'next'))
for _, q in ipairs(redis.call('ZRANGE', p .. 'questions', 0, -1)) do
  if redis.call('HGET', p .. 'q:' .. q, 'state') == 'open' then redis.call('HSET', p .. 'q:' .. q, 'state', 'closed') end
end
redis.call('HSET', p .. 'q:' .. qid, 'kind', ARGV[4], 'spec', ARGV[5], 'state', 'open', 'created', now)
redis.call('ZADD', p .. 'questions', qid, qid)
for _, q in ipairs(redis.call('ZRANGEBYSCORE', p .. 'questions', '-inf', qid - max_q)) do
  redis.call('DEL', p .. 'q:' .. q, p .. 'a:' .. q)
  redis.call('ZREM', p .. 'questions', q)
end
redis.call('HSET', p .. 'meta', 'current', qid, 'next', qid + 1, 'touched', now)
redis.call('HINCRBY', p .. 'meta', 'version', 1)
touch_all(ttl)
return qid
"""

# ARGV: p, now, ttl_ms, qid, state -> version
_QSTATE = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, ttl, qid, state = ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local old = redis.call('HGET', p .. 'q:' .. qid, 'state')
if not old then return 'unknown_question' end
if old == 'revealed' and state ~= 'revealed' then return 'bad_question' end
if state == 'open' then
  for _, q in ipairs(redis.call('ZRANGE', p .. 'questions', 0, -1)) do
    if redis.call('HGET', p .. 'q:' .. q, 'state') == 'open' then redis.call('HSET', p .. 'q:' .. q, 'state', 'closed') end
  end
end
redis.call('HSET', p .. 'q:' .. qid, 'state', state)
redis.call('HSET', p .. 'meta', 'touched', now)
local v = redis.call('HINCRBY', p .. 'meta', 'version', 1)
touch_all(ttl)
return v
"""

# ARGV: p, now, forget_s, max_students, session, nickname ('' = none) -> following (0/1)
_JOIN = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, forget, max_s, session = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local gone = redis.call('ZRANGEBYSCORE', p .. 'seen', '-inf', '(' .. string.format('%.17g', now - forget))
for _, s in ipairs(gone) do redis.call('HDEL', p .. 'students', s); redis.call('ZREM', p .. 'seen', s) end
local rec = redis.call('HGET', p .. 'students', session)
if rec then
  rec = cjson.decode(rec)
else
  if redis.call('HLEN', p .. 'students') >= max_s then return 'class_full' end
  rec = {f = 1, a = 0}
end
if ARGV[6] == '' then rec.n = cjson.null else rec.n = ARGV[6] end
redis.call('HSET', p .. 'students', session, cjson.encode(rec))
redis.call('ZADD', p .. 'seen', now, session)
local ttl = class_ttl()
if ttl > 0 then redis.call('PEXPIRE', p .. 'students', ttl); redis.call('PEXPIRE', p .. 'seen', ttl) end
return rec.f
"""

# ARGV: p, now, forget_s, session, following ('' = keep) -> 'ok'
_TOUCH = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, forget, session = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local rec = live_student(session, now, forget)
if not rec then return 'not_joined' end
if ARGV[5] ~= '' then
  rec.f = tonumber(ARGV[5])
  redis.call('HSET', p .. 'students', session, cjson.encode(rec))
end
redis.call('ZADD', p .. 'seen', now, session)
return 'ok'
"""

# ARGV: p, now, forget_s, session, qid, answer, min_interval, max_answers -> 'ok'
_ANSWER = _LUA_COMMON + """
if not alive() then return 'no_class' end
local now, forget, session, qid = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
local state = redis.call('HGET', p .. 'q:' .. qid, 'state')
if not state then return 'unknown_question' end
if state ~= 'open' then return 'question_closed' end
local rec = live_student(session, now, forget)
if not rec then return 'not_joined' end
if now - tonumber(rec.a) < tonumber(ARGV[7]) then return 'too_fast' end
local key = p .. 'a:' .. qid
if redis.call('HEXISTS', key, session) == 0 and redis.call('HLEN', key) >= tonumber(ARGV[8]) then
  return 'too_many_answers'
end
redis.call('HSET', key, session, ARGV[6])
rec.a = ARGV[2]  -- the caller's exact float as text (cjson would round a number to 14 digits)
redis.call('HSET', p .. 'students', session, cjson.encode(rec))
redis.call('ZADD', p .. 'seen', now, session)
local ttl = class_ttl()
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
return 'ok'
"""


class RedisStore:
    """``ClassStore`` on Redis. ``url``: e.g. ``redis://127.0.0.1:6379/0``."""

    def __init__(self, url: str, page_ids: Collection[str], clock: Callable[[], float] = time.time) -> None:
        import redis  # only a server that uses Redis needs the client loaded

        self._redis = redis.Redis.from_url(url, decode_responses=True, socket_timeout=5.0,
                                           socket_connect_timeout=5.0, health_check_interval=30)
        self._page_ids = frozenset(page_ids)
        self._clock = clock
        self._scripts = {name: self._redis.register_script(source) for name, source in (
            ("bump", _BUMP), ("open", _OPEN), ("ask", _ASK), ("qstate", _QSTATE), ("join", _JOIN),
            ("touch", _TOUCH), ("answer", _ANSWER))}

    # --- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _p(code: str) -> str:
        return f"tj:{{{code}}}:"

    def _run(self, name: str, code: str, *args: Any) -> Any:
        cutoff = repr(float(self._clock() - rules.CLASS_TTL_S))
        result = self._scripts[name](keys=[self._p(code) + "meta"], args=[self._p(code), *args, cutoff])
        if isinstance(result, str) and result in rules.ERROR_CODES:
            raise ClassError(result)
        return result

    def _ttl_ms(self) -> int:
        return int(rules.CLASS_TTL_S * 1000)

    def _now(self) -> str:
        return repr(float(self._clock()))

    def _alive(self, meta: dict[str, str]) -> dict[str, str]:
        if not meta or float(meta["touched"]) < self._clock() - rules.CLASS_TTL_S:
            raise ClassError("no_class")
        return meta

    def _meta(self, code: str) -> dict[str, str]:
        return self._alive(self._redis.hgetall(self._p(code) + "meta"))

    @staticmethod
    def _as_question(qid: int, row: dict[str, str]) -> Question:
        if not row:
            raise ClassError("unknown_question")
        return Question(qid, row["kind"], json.loads(row["spec"]), row["state"], float(row["created"]))

    def _question(self, code: str, qid: Any) -> Question:
        if type(qid) is not int:
            raise ClassError("unknown_question")
        return self._as_question(qid, self._redis.hgetall(f"{self._p(code)}q:{qid}"))

    def _meta_question(self, code: str, qid: Any, *more: str) -> tuple[Question, list[Any]]:
        """The class (alive?) and question ``qid`` in one round trip, with ``HGETALL`` of ``more``
        keys of the class; the errors in the embedded store's order."""
        p = self._p(code)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hgetall(p + "meta")
        if type(qid) is int:
            pipe.hgetall(f"{p}q:{qid}")
            for key in more:
                pipe.hgetall(p + key)
        found = pipe.execute()
        self._alive(found[0])
        if type(qid) is not int:
            raise ClassError("unknown_question")
        return self._as_question(qid, found[1]), found[2:]

    def _bump(self, teacher: TeacherPass, *fields: Any) -> int:
        code = pass_code(teacher)
        return int(self._run("bump", code, self._now(), self._ttl_ms(), *fields))

    # --- the teacher ---------------------------------------------------------------------------

    def open_class(self, teacher: TeacherPass) -> ClassState:
        code = pass_code(teacher)
        meta = self._redis.hgetall(self._p(code) + "meta")
        if meta and float(meta["touched"]) < self._clock() - rules.CLASS_TTL_S:
            self._delete(code)  # as the embedded store does: a class past its time is gone
        self._run("open", code, self._now(), self._ttl_ms())
        return self.state(code)

    def end_class(self, teacher: TeacherPass) -> None:
        self._delete(pass_code(teacher))

    def _delete(self, code: str) -> None:
        p = self._p(code)
        qids = self._redis.zrange(p + "questions", 0, -1)
        self._redis.delete(p + "meta", p + "students", p + "seen", p + "questions",
                           *[f"{p}q:{q}" for q in qids], *[f"{p}a:{q}" for q in qids])

    def set_view(self, teacher: TeacherPass, view: View) -> int:
        pass_code(teacher)
        clean = rules.check_view(view, self._page_ids)
        return self._bump(teacher, "view", clean.to_json())

    def set_lead(self, teacher: TeacherPass, on: bool) -> int:
        pass_code(teacher)
        if not isinstance(on, bool):
            raise ClassError("bad_view", "lead is on or off")
        return self._bump(teacher, "lead", int(on))

    def ask(self, teacher: TeacherPass, kind: str, spec: dict[str, Any]) -> Question:
        code, now = pass_code(teacher), self._clock()
        clean = rules.check_question(kind, spec)
        qid = int(self._run("ask", code, repr(float(now)), self._ttl_ms(), kind,
                            json.dumps(clean, ensure_ascii=False), rules.MAX_QUESTIONS))
        return Question(qid, kind, clean, rules.OPEN, now)

    def set_question_state(self, teacher: TeacherPass, qid: int, state: str) -> int:
        code = pass_code(teacher)
        if state not in rules.STATES:
            raise ClassError("bad_question", "state")
        self._meta_question(code, qid)
        return int(self._run("qstate", code, self._now(), self._ttl_ms(), qid, state))

    def roster(self, teacher: TeacherPass) -> Roster:
        code = pass_code(teacher)
        p = self._p(code)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hgetall(p + "meta")
        pipe.zrangebyscore(p + "seen", self._clock() - rules.JOINED_WINDOW_S, "+inf")
        meta, live = pipe.execute()
        self._alive(meta)
        records = self._redis.hmget(p + "students", live) if live else []
        following = sum(1 for r in records if r and json.loads(r).get("f"))
        return Roster(sum(1 for r in records if r), following)

    def questions(self, teacher: TeacherPass) -> list[Question]:
        code = pass_code(teacher)
        self._meta(code)
        qids = self._redis.zrange(self._p(code) + "questions", 0, -1)
        return [self._question(code, int(q)) for q in qids]

    # --- anyone with the code ------------------------------------------------------------------

    def version(self, code: str) -> int:
        code = rules.check_code(code)
        version, touched = self._redis.hmget(self._p(code) + "meta", ["version", "touched"])
        if version is None or float(touched) < self._clock() - rules.CLASS_TTL_S:
            raise ClassError("no_class")
        return int(version)

    def state(self, code: str) -> ClassState:
        code = rules.check_code(code)
        meta = self._meta(code)
        question = None
        if meta.get("current"):
            try:
                question = self._question(code, int(meta["current"]))
            except ClassError:
                question = None
        return ClassState(code, float(meta["created"]), int(meta["version"]), meta["lead"] == "1",
                          View.from_json(meta["view"]) if meta.get("view") else None, question)

    def tally(self, code: str, qid: int, teacher: TeacherPass | None = None) -> Tally:
        code = rules.check_code(code)
        if teacher is not None:
            check_pass(teacher, code)
        question, (answers,) = self._meta_question(code, qid, f"a:{qid}")
        if teacher is None and question.state != rules.REVEALED:
            raise ClassError("not_revealed")
        p = self._p(code)
        sessions = list(answers)
        records, seen = [], []
        if sessions:
            pipe = self._redis.pipeline(transaction=False)
            pipe.hmget(p + "students", sessions)
            pipe.zmscore(p + "seen", sessions)
            records, seen = pipe.execute()
        alive = self._clock() - rules.FORGET_STUDENT_S  # a forgotten student's nickname is gone
        names = [json.loads(r).get("n") if r and t is not None and t >= alive else None
                 for r, t in zip(records, seen, strict=True)]
        return rules.make_tally(qid, [(answers[s], n) for s, n in zip(sessions, names, strict=True)])

    # --- a student -----------------------------------------------------------------------------

    def join(self, code: str, session: str, nickname: str | None = None) -> Student:
        code, session = rules.check_code(code), rules.check_session(session)
        name = rules.clean_nickname(nickname)
        now = self._clock()
        following = self._run("join", code, repr(float(now)), rules.FORGET_STUDENT_S, rules.MAX_STUDENTS,
                              session, name or "")
        return Student(session, name, bool(int(following)), now)

    def heartbeat(self, code: str, session: str) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        self._run("touch", code, self._now(), rules.FORGET_STUDENT_S, session, "")

    def set_following(self, code: str, session: str, following: bool) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        if not isinstance(following, bool):
            raise ClassError("bad_answer", "following is on or off")
        self._run("touch", code, self._now(), rules.FORGET_STUDENT_S, session, int(following))

    def student(self, code: str, session: str) -> Student:
        code, session = rules.check_code(code), rules.check_session(session)
        p = self._p(code)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hgetall(p + "meta")
        pipe.hget(p + "students", session)
        pipe.zscore(p + "seen", session)
        meta, record, seen = pipe.execute()
        self._alive(meta)
        if record is None or seen is None or seen < self._clock() - rules.FORGET_STUDENT_S:
            raise ClassError("not_joined")
        data = json.loads(record)
        return Student(session, data.get("n"), bool(data.get("f")), float(seen))

    def answer(self, code: str, session: str, qid: int, answer: Any) -> str:
        code, session = rules.check_code(code), rules.check_session(session)
        question, _ = self._meta_question(code, qid)
        if question.state != rules.OPEN:
            raise ClassError("question_closed")
        counted = rules.check_answer(question, answer)
        self._run("answer", code, self._now(), rules.FORGET_STUDENT_S, session, qid, counted,
                  rules.MIN_ANSWER_INTERVAL_S, rules.MAX_ANSWERS_PER_QUESTION)
        return counted

    def my_answer(self, code: str, session: str, qid: int) -> str | None:
        code, session = rules.check_code(code), rules.check_session(session)
        p = self._p(code)
        pipe = self._redis.pipeline(transaction=False)
        pipe.hgetall(p + "meta")
        if type(qid) is int:
            pipe.exists(f"{p}q:{qid}")
            pipe.hget(f"{p}a:{qid}", session)
        found = pipe.execute()
        self._alive(found[0])
        if type(qid) is not int or not found[1]:
            raise ClassError("unknown_question")
        return found[2]

    def leave(self, code: str, session: str) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        self._meta(code)
        p = self._p(code)
        self._redis.hdel(p + "students", session)
        self._redis.zrem(p + "seen", session)

    def close(self) -> None:
        self._redis.close()
