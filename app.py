"""Token Journey — entry point and Overview page: the whole journey on one diagram.

Two roles, one file. ``streamlit run app.py`` first imports this file as a module (it finds the
``st.App`` below) and serves that app: its lifespan starts the server's work (both models, the
pages' modules) before the first browser connects. Every script run (a student's page, AppTest)
executes it as ``__main__``: the Overview.
"""

from __future__ import annotations

import streamlit as st

if __name__ == "__main__":  # a script run: draw the Overview
    from ui.page import open_page, try_this
    from ui.resources import first_page_drawn
    from ui.sections import overview

    page = open_page("overview")
    overview.journey_section(page)
    overview.pipeline_section(page)
    overview.stations_section()
    try_this("overview.try_title", "overview.try_list")

    first_page_drawn()  # the server held its start-up work back until this first Overview was drawn
else:  # imported by `streamlit run app.py`: the server itself
    from serving.settings import Settings
    from serving.startup import launch_lifespan

    # What the first Overview run would otherwise do itself, on the critical path of a cold start
    # (~0.2-0.3 s of its 0.6 s, profiled): import its modules, read both languages' strings,
    # compile Streamlit's emoji pattern (set_page_config and every st.page_link test their icon).
    FIRST_PAGE_MODULES = ("core.lessons.head_analysis", "core.lessons.journey", "ui.diagram", "ui.nav", "ui.page",
                          "ui.presenter", "ui.tokens")

    def start_and_warm(settings: Settings) -> None:
        """The server's start (``serving.startup.start``), then the first page's own imports."""
        import importlib

        from serving.startup import start
        from ui.resources import APP

        start(settings, APP)
        for name in FIRST_PAGE_MODULES:
            importlib.import_module(name)
        from streamlit.string_util import is_emoji

        from ui.i18n import LANGUAGES, load_strings

        for lang in LANGUAGES:
            load_strings(lang)
        is_emoji("🚂")

    app = st.App(__file__, lifespan=launch_lifespan(start_and_warm))
