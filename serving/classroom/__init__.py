"""Class mode's server side, without Streamlit: the class store and the teacher's secrets.

- ``rules``: what a class holds (``View``, ``Question``, ``ClassState`` ...), the limits, and the
  checks every value passes before it is stored (``ClassError`` with a translatable ``code``).
- ``store``: the ``ClassStore`` protocol, the embedded SQLite backend and ``open_store``.
- ``redis_store``: the same protocol on Redis (``TOKEN_JOURNEY_REDIS_URL``), for many machines.
- ``keys``: the teacher key, the ``TeacherPass`` that teacher actions need, the class code.
- ``links``: the teacher and student links, the QR code; ``python -m serving.classroom.links``.
- ``follow``: ``StudentPoll``, what a student page's timed fragment calls each tick.
- ``export``: the teacher's CSV of the counts (cells a spreadsheet would run are made text).

``docs/class_mode.md`` is the design in one page. Nothing here runs at import.
"""
