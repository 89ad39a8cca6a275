"""The app's categorical colours, chosen to stay apart for colour-blind eyes.

Every list here keeps each pair of its colours at least ``MIN_DELTA_E`` apart (CIEDE2000) in
normal vision and as protanopes, deuteranopes and tritanopes see them (Machado, Oliveira &
Fernandes 2009, severity 1.0); ``tests/unit/test_palettes.py`` checks every categorical palette
the charts use. The base is Okabe & Ito's palette ("Color Universal Design", 2008) without
black (unreadable on the dark theme): a series palette ordered so the first four also keep
3:1 against both Streamlit backgrounds, and for the 3-D map's categories four more colours
found by a greedy search of the RGB cube that keeps the same distance. A colour is never the
only cue: series also differ by label, dash or shape (see the builders).
"""

from __future__ import annotations

MIN_DELTA_E = 10.0  # CIEDE2000, every pair, in each of the four visions (the test's threshold)

BLUE, VERMILLION, BLUISH_GREEN, REDDISH_PURPLE = "#0072B2", "#D55E00", "#009E73", "#CC79A7"
ORANGE, SKY_BLUE, YELLOW = "#E69F00", "#56B4E9", "#F0E442"
NEUTRAL_GREY = "#707070"  # "other", "rest", "masked": apart from every colour below (a mid grey is not)

# Series of lines and bars, in order of use: the first four read on white and on the dark theme.
SERIES = (BLUE, VERMILLION, BLUISH_GREEN, REDDISH_PURPLE, ORANGE, SKY_BLUE, YELLOW)

# Categories of the 3-D map (and heads): Okabe–Ito, then four colours searched for the same
# distance to all of these and to NEUTRAL_GREY (the map's "other" tokens).
CATEGORIES = (ORANGE, SKY_BLUE, BLUISH_GREEN, YELLOW, BLUE, VERMILLION, REDDISH_PURPLE,
              "#883322", "#BBCCBB", "#664466", "#8877FF")

# Dash patterns that go with SERIES (a line tells itself apart without its colour).
DASHES = ((1, 0), (6, 3), (2, 2), (8, 3, 2, 3), (1, 3), (10, 4), (4, 2, 1, 2))
# Vega symbols that go with SERIES (a bar or a point tells itself apart without its colour):
# outlines that differ at 8 px, filled ones first.
SHAPES = ("circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-right", "triangle-left")
# The outline of a symbol drawn on a bar of its own colour: a mid grey, 3:1 or more against
# both themes' backgrounds and apart from every SERIES colour's face.
SHAPE_OUTLINE = "#8a8f98"


def ink_on(colour: str) -> str:
    """Black or white, whichever reads better on ``colour`` (WCAG relative luminance): at least
    4.5:1 on every SERIES colour (vermillion reaches it only with pure black).

    Example: ink_on("#0072B2") -> "#ffffff"; ink_on("#F0E442") -> "#000000"
    """
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    lum = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    on_white = 1.05 / (lum + 0.05)
    on_black = (lum + 0.05) / 0.05
    return "#ffffff" if on_white > on_black else "#000000"
