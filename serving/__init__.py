"""What a shared classroom server needs, without Streamlit (imports core only).

- ``settings``: every ``TOKEN_JOURNEY_*`` variable, read once into a frozen ``Settings``;
- ``startup``: ``start(settings)``, the one call that makes this process a server;
- ``models``: the model registry and the shared forward passes;
- ``registry``: caches with byte budgets (``memo``, ``ResultCache``, ``ModelRegistry``);
- ``workers``: background threads joined at exit (``start_worker``, ``SHUTTING_DOWN``);
- ``process``: threads, glibc's heap and the garbage collector, each with its switch;
- ``patches``: the Streamlit 1.67.0 patches, installed by ``patches.install(settings)``;
- ``live_train``: the Training page's job queue.

Importing any of them does no work (tests/unit/test_no_work_at_import.py).
"""
