"""Data → chart builders (Vega-Lite specs, written directly or by Altair; the 3-D spaces' data
for ``ui.components.space3d``). Pages pass arrays and labels.

Every chart gets a title, axis titles, and a tooltip with exact values.
Altair builds them without its per-object schema checks (``ui.charts.altair_fast``: the same
specs, less server CPU per rerun).
"""

from ui.charts import altair_fast as _altair_fast

_altair_fast.enable()
