"""Warm a student's browser for the pages still to come, while they read the first one.

Streamlit loads the JavaScript of an element kind (Vega-Lite charts, data grids, KaTeX,
sliders …) the first time a page shows one: ~1 MB for the first chart, ~1.5 MB for the first
data grid, parsed and compiled on the student's device before the page can draw. On a school
laptop that is most of a page's first visit. Once the first page has been drawn and the browser
is idle, the tab imports those modules itself, one at a time in idle periods; Streamlit's own
import of the same file later finds the module already loaded (one module per URL in a
document), so a page's first visit costs what a second visit costs.

The module files are named by Streamlit's build (``<Element>.<hash>.js``); the names below are
resolved against the installed Streamlit's static folder once per process, and a name that is
missing is skipped (``tests/unit/test_browser_warmup.py`` fails loudly instead, for the pinned
version). Nothing is fetched from anywhere but this server, and nothing at all when the browser
asks to save data (``navigator.connection.saveData``): the same bytes then come with each page.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import streamlit

# Element modules the pages use, in the order the stations need them (charts first: every page
# past the Overview has one). Their own imports come along with them.
ELEMENT_MODULES: tuple[str, ...] = (
    "ArrowVegaLiteChart", "embed", "vega-interpreter", "Slider", "Radio", "Button", "Metric",
    "TextInput", "FileUploader", "rehype-katex", "DataFrame", "Table", "Multiselect",
)

_HASHED = re.compile(r"^(?P<stem>.+)\.[A-Za-z0-9_-]{6,12}\.js$")


def static_js_folder() -> Path:
    return Path(streamlit.__file__).parent / "static" / "static" / "js"


@functools.cache
def module_files() -> tuple[str, ...]:
    """The installed file name of each of ``ELEMENT_MODULES`` that exists, in that order."""
    by_stem: dict[str, str] = {}
    folder = static_js_folder()
    if folder.is_dir():
        for path in folder.iterdir():
            match = _HASHED.match(path.name)
            if match:
                by_stem.setdefault(match.group("stem"), path.name)
    return tuple(by_stem[name] for name in ELEMENT_MODULES if name in by_stem)


# Runs on every page; does its work once per tab. ``import()`` of a URL the document has already
# imported returns the same module, which is what makes Streamlit's later import instant.
_SCRIPT = r"""
<script>
(function () {
  const w = window;
  if (w.__tjWarmup) return;
  w.__tjWarmup = true;
  const files = __FILES__;
  const main = document.querySelector('script[type="module"][src*="/static/js/"]');
  const saving = navigator.connection && navigator.connection.saveData;  // the student asked for fewer bytes
  if (!main || !files.length || saving || !("requestIdleCallback" in w)) return;
  const idle = () => new Promise((done) => w.requestIdleCallback(done, {timeout: 500}));
  const drawn = () => !document.querySelector('[data-testid="stStatusWidget"]');
  const run = async () => {
    while (!drawn()) await new Promise((done) => setTimeout(done, 250));
    await new Promise((done) => setTimeout(done, 1500));
    for (const file of files) {
      await idle();
      try { await import(new URL(file, main.src).href); } catch (error) { /* the page loads it itself */ }
    }
  };
  if (document.readyState === "complete") run(); else w.addEventListener("load", run, {once: true});
})();
</script>
"""


def script() -> str:
    """The ``<script>`` element that warms this tab (for ``st.html(..., unsafe_allow_javascript=True)``)."""
    files = json.dumps(list(module_files())).replace("<", "\\u003c")
    return _SCRIPT.replace("__FILES__", files)
