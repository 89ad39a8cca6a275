"""Data → chart builders: Vega-Lite dicts (``ui.charts.vl``) and the 3-D spaces' data for
``ui.components.space3d``. Pages pass arrays and labels.

Every chart gets a title, axis titles, and a tooltip with exact values.
"""
