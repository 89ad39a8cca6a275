"""Token Journey — entry point and Overview page: the whole journey on one diagram."""

from __future__ import annotations

from ui.page import open_page, try_this
from ui.resources import first_page_drawn
from ui.sections import overview

page = open_page("overview")
overview.journey_section(page)
overview.pipeline_section(page)
overview.stations_section()
try_this("overview.try_title", "overview.try_list")

first_page_drawn()  # the server held its start-up work back until this first Overview was drawn
