"""Start-up: the one call that makes this process a classroom server.

``start(settings, app)`` (idempotent) does, in order: make ``settings`` the process' settings,
force the device, limit the CPU thread pools, install the Streamlit patches
(``serving.patches``), apply the byte budgets and the teacher's checkpoints
(``serving.models.configure``), register the app's precompute hooks, and start the background
load: the built-ins loaded and precomputed on a worker thread, then the second-tier tables.

Entry points call it once. ``streamlit run app.py`` (the README's command and every launcher in
``scripts/``) first imports ``app.py`` as a module, finds its ``st.App`` and serves it; that
app's ``lifespan`` (``launch_lifespan`` below) starts everything on a thread of its own before
the server accepts its first connection, so the browser loads Streamlit's page while torch and
the Overview's model load. Every page also calls ``start_once`` (``ui.page.setup``): the same
start, for a script run with no launcher before it (AppTest). Nothing here runs at import.

Example: start(Settings.from_env())
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from serving import settings as settings_module
from serving.settings import Settings, SettingsError
from serving.workers import SHUTTING_DOWN, start_worker

START_GRACE_S = 1.0  # after the first page's script ends: the browser fetches its JavaScript meanwhile
SCRIPT_THREAD = "ScriptRunner.scriptThread"  # Streamlit's thread for a session's runs (alive while it runs)
YIELD_LIMIT_S = 2.0  # start-up waits at most this long per step for the pages being run
YIELD_POLL_S = 0.02


@dataclass(frozen=True)
class AppParts:
    """What the app adds to the start (the Streamlit side passes it: serving never imports ui)."""

    # ``precompute(run_prompt, name_of)`` -> {key: fn(loaded)}: computed once per model at its load
    precompute: Callable[[Callable[[str, str], Any], Callable[[Any], str | None]], Mapping[str, Callable[[Any], Any]]] | None = None
    after_start: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)  # built-ins only, after start
    warm_imports: tuple[str, ...] = ()  # modules the pages import, loaded in the background at start


_START_LOCK = threading.Lock()
_STARTED: Settings | None = None
_FIRST_PAGE_DRAWN = threading.Event()
_GRACE_STARTED = threading.Event()


def started() -> Settings | None:
    """The settings the process started with, or None before ``start``."""
    return _STARTED


def settings_or_exit(environ: Mapping[str, str] | None = None) -> Settings:
    """``Settings.from_env``, or the one line saying which value is malformed on stderr and exit 2."""
    try:
        return Settings.from_env(environ)
    except SettingsError as error:
        print(f"[token-journey] {error}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


# numpy's and torch's thread pools read these when they are first imported (a value already set in
# the environment wins); ``serving.process.limit_cpu_threads`` brings pools started earlier down.
POOL_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
LAUNCH_THREAD = "token-journey-launch"


def set_pool_variables(threads: int, environ: MutableMapping[str, str] | None = None) -> None:
    """Before numpy or torch is imported: their pools then start with ``threads`` threads (one per
    request serves a class best; ``serving.process.limit_cpu_threads`` explains why).

    Example: set_pool_variables(1)  # OPENBLAS_NUM_THREADS=1 ... unless already set
    """
    env = os.environ if environ is None else environ
    for name in POOL_VARIABLES:
        env.setdefault(name, str(max(1, threads)))


def launch_lifespan(begin: Callable[[Settings], None]) -> Callable[[Any], AbstractAsyncContextManager[None]]:
    """The ``lifespan`` of ``app.py``'s ``st.App``, for ``streamlit run app.py``.

    Reads the settings now (a malformed ``TOKEN_JOURNEY_*`` value: its one line on stderr, exit
    code 2, before the server listens) and sets the thread-pool variables before numpy is
    imported. When the server starts, ``begin(settings)`` (``start`` and the first page's imports:
    ~1.2 s of imports, then the Overview's model) runs on a thread of its own, so the server
    answers at once and the browser loads Streamlit's page (~1.3 s of script parsing, in the
    browser's process) meanwhile; the first script run then finds it done or joins it
    (``start``'s lock), never starting a second one. ``bench/cold_start.py`` measures it.

    Example: app = st.App(__file__, lifespan=launch_lifespan(lambda s: start(s, APP)))
    """
    settings = settings_or_exit()
    set_pool_variables(settings.threads)

    def run_begin() -> None:
        try:
            begin(settings)
        except Exception as error:  # the first page runs the same start itself and shows the error
            print(f"[token-journey] start-up: {type(error).__name__}: {error}", file=sys.stderr, flush=True)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        # not a joined worker: a page's start_once waits on ``start``'s lock, not on this thread
        threading.Thread(target=run_begin, name=LAUNCH_THREAD, daemon=True).start()
        yield

    return lifespan


def start_once(app: AppParts | None = None) -> Settings:
    """``start`` with the environment's settings, unless the process has started already.

    Called from a page's script thread (after the launcher's start, a no-op), where raising
    ``SystemExit`` would end only that thread: a malformed setting ends the whole process (exit
    code 2) after its one line on stderr, as the launcher does.
    """
    done = _STARTED
    if done is not None:
        return done
    try:
        settings = settings_or_exit()
    except SystemExit as stop:
        os._exit(int(stop.code or 2))
    return start(settings, app)


def start(settings: Settings, app: AppParts | None = None) -> Settings:
    """Make this process a server with ``settings`` (a second call returns the first's settings)."""
    global _STARTED
    with _START_LOCK:
        if _STARTED is not None:
            return _STARTED
        from core.engine import device
        from serving import models, patches, process

        settings_module.use(settings)
        device.force(settings.device)
        process.limit_cpu_threads(settings.threads)
        patches.install(settings)
        models.configure(settings)
        app = app or AppParts()
        if app.precompute is not None:
            for key, fn in app.precompute(models.run_prompt, models.name_of).items():
                models.add_precompute(key, fn)
        _STARTED = settings
    if settings.background_load:
        _start_background_load(settings, app)
    return settings


def first_page_drawn() -> None:
    """A script run finished drawing a page (the Overview calls it at its end): the background
    work held back for the first student goes on ``START_GRACE_S`` later, once the browser has
    fetched that page's JavaScript (~1 MB, requested after the script's messages arrive)."""
    if _FIRST_PAGE_DRAWN.is_set() or _GRACE_STARTED.is_set():
        return
    _GRACE_STARTED.set()
    timer = threading.Timer(START_GRACE_S, _FIRST_PAGE_DRAWN.set)
    timer.daemon = True
    timer.start()


def _hold_until_first_page(deadline: float) -> None:
    """Wait until the first page is drawn or ``deadline`` (``time.monotonic``) passes.

    Everything the server does at start shares one interpreter lock: while the first model's
    precomputations, the chart libraries' imports and the second model ran, the server answered
    the first browser in the gaps. Held back until that Overview is drawn (at most
    ``start_hold_s``): Overview interactive 2.69 -> 2.33 s (protocol). A page that needs a
    table before then computes it itself (``ModelRegistry.derived``).
    """
    _FIRST_PAGE_DRAWN.wait(max(0.0, deadline - time.monotonic()))


def yield_to_pages(limit_s: float = YIELD_LIMIT_S) -> float:
    """Wait while a student's page is being run (at most ``limit_s``); returns the seconds waited.

    Start-up work (the second model, precomputed tables, chart libraries) is for students still to
    come; a student waiting for a page comes first. Every thread of the process shares one
    interpreter lock, so a page run beside a precomputation takes about twice as long: the
    background work takes its next step only when no script runs. ``limit_s`` keeps a busy class
    from holding start-up back for ever (a page then computes what it needs itself).
    """
    started = time.monotonic()
    end = started + limit_s
    while time.monotonic() < end and any(t.name == SCRIPT_THREAD for t in threading.enumerate()):
        time.sleep(YIELD_POLL_S)
    return time.monotonic() - started


def _start_background_load(settings: Settings, app: AppParts) -> None:
    """Load the built-ins (and run every precompute hook) on a worker thread, then the tables
    the pages need later; after the first page, each step waits for the pages being run."""
    from serving import models, process

    registry = models.registry()
    deadline = time.monotonic() + settings.start_hold_s

    def hold() -> None:
        if settings.start_hold_s > 0:
            _hold_until_first_page(deadline)
        yield_to_pages()

    registry.prepare_gate = hold

    def load(name: str) -> bool:
        try:
            registry.get(name)
        except Exception:  # a broken checkpoint: the page that asks shows the message
            return False
        return True

    def after_start() -> None:
        """The built-ins' second-tier tables, once the Overview can already be served."""
        for name in models.builtin_model_names():
            for key, fn in app.after_start.items():
                if SHUTTING_DOWN.is_set():
                    return
                yield_to_pages()
                try:
                    registry.derived(name, key, fn)
                except Exception:  # the page that needs it computes it again and shows the error
                    continue

    def work() -> None:
        # The Overview's model first: the first student waits for it. Then, once that Overview is
        # drawn, the chart libraries every other page imports (~1.2 s: a page visited meanwhile
        # would import them itself, on the same lock), while the first model's tables are
        # precomputed on their own thread; then the second model.
        first, *rest = models.builtin_model_names()
        if load(first):
            hold()
            for module in app.warm_imports:
                yield_to_pages()
                try:
                    importlib.import_module(module)
                except Exception:  # an optional chart library missing: the page that needs it says so
                    pass
            registry.wait_ready(first, timeout=120)
        for name in rest:
            if SHUTTING_DOWN.is_set():
                return
            yield_to_pages()
            if load(name):
                registry.wait_ready(name, timeout=120)
        after_start()
        if settings.gc_freeze:
            process.freeze_heap()

    start_worker(work, "token-journey-start")
