"""Data → chart builders (Altair for 2D, Plotly for 3D). Pages pass arrays and labels.

Every chart gets a title, axis titles, and a tooltip with exact values.
"""
