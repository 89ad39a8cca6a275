"""Categorical palettes stay distinct for colour-blind eyes.

Method: each colour is simulated as protanopes, deuteranopes and tritanopes see it with the
matrices of Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear sRGB; every
pair of a palette's colours must then differ by at least ``MIN_DELTA_E`` = 10 in CIEDE2000
(CIELAB, D65), in each simulated vision and in normal vision. (ΔE00 ≈ 2 is a just-noticeable
difference side by side; 10 keeps two small chart marks apart at a glance.) The palettes are
read from the modules that draw with them, so a new colour there is checked here.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ui.charts import attention, block, output, palettes, positional, training, vectors

# Machado et al. 2009, Table 1 at severity 1.0 (linear RGB in, linear RGB out).
MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
VISIONS = ("normal", *MACHADO)
SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
D65 = np.array([0.95047, 1.0, 1.08883])


def _linear(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> tuple[float, float, float]:
    t = SRGB_TO_XYZ @ linear_rgb / D65
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def seen(hex_colour: str, vision: str) -> tuple[float, float, float]:
    """CIELAB of a colour as seen in ``vision`` (normal or one of MACHADO)."""
    rgb = _linear(hex_colour)
    if vision != "normal":
        rgb = np.clip(MACHADO[vision] @ rgb, 0.0, 1.0)
    return _lab(rgb)


def delta_e2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 (Sharma, Wu & Dalal 2005), kL = kC = kH = 1."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar ** 7 / (c_bar ** 7 + 25 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360
    h2p = math.degrees(math.atan2(b2, a2p)) % 360
    dlp, dcp = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dhp = 0.0
    else:
        dhp = h2p - h1p
        dhp = dhp - 360 if dhp > 180 else dhp + 360 if dhp < -180 else dhp
    dhp_big = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dhp / 2))
    lbp, cbp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbp = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbp = (h1p + h2p) / 2
    else:
        hbp = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(hbp - 30)) + 0.24 * math.cos(math.radians(2 * hbp))
         + 0.32 * math.cos(math.radians(3 * hbp + 6)) - 0.20 * math.cos(math.radians(4 * hbp - 63)))
    d_theta = 30 * math.exp(-(((hbp - 275) / 25) ** 2))
    rc = 2 * math.sqrt(cbp ** 7 / (cbp ** 7 + 25 ** 7))
    sl = 1 + 0.015 * (lbp - 50) ** 2 / math.sqrt(20 + (lbp - 50) ** 2)
    sc, sh = 1 + 0.045 * cbp, 1 + 0.015 * cbp * t
    rt = -math.sin(math.radians(2 * d_theta)) * rc
    return math.sqrt((dlp / sl) ** 2 + (dcp / sc) ** 2 + (dhp_big / sh) ** 2 + rt * (dcp / sc) * (dhp_big / sh))


def closest_pair(colours: tuple[str, ...], vision: str) -> tuple[float, str, str]:
    return min((delta_e2000(seen(a, vision), seen(b, vision)), a, b) for a, b in itertools.combinations(colours, 2))


# Every categorical palette the charts and the 3-D map use, as many colours as they use at once.
PALETTES: dict[str, tuple[str, ...]] = {
    "series (lines and bars: block, positional, arrows)": tuple(palettes.SERIES),
    "3-D map categories and 'other'": (*vectors.CATEGORY_COLOURS[:11], vectors.OTHER_COLOUR),
    "head colours (head view)": tuple(attention.HEAD_COLOURS),
    "Multi-head grid behaviours (head picker)": tuple(palettes.SERIES[:5]),
    "Transformer-block series": tuple(block.SERIES_COLORS),
    "Transformer-block parameter kinds": tuple(block.KIND_COLORS.values()),
    "KV cache: recompute / MHA / cached": (output.RECOMPUTE_COLOR, output.AFTER_COLOR, output.CACHED_COLOR),
    "KV cache: visible / new row / masked": (output.VISIBLE_COLOR, output.NEW_ROW_COLOR, output.MASKED_COLOR),
    "sampling: top / tail": (output.AFTER_COLOR, output.TAIL_COLOR),
    "before / after": (output.ORIGINAL_COLOR, output.AFTER_COLOR),
    "chosen / other": (output.CACHED_COLOR, output.ORIGINAL_COLOR),
    "positional series": tuple(positional.SERIES_COLOURS),
    "positional query / key": (positional.Q_COLOUR, positional.K_COLOUR),
    "training curves": (training.TRAIN_COLOUR, training.HELD_COLOUR, training.MARK_COLOUR, training.UNIFORM_COLOUR),
    "vector pairs": tuple(vectors.PAIR_COLOURS),
    "vector arrows": tuple(vectors.ARROW_COLOURS),
}


def test_ciede2000_matches_sharma_reference_pairs() -> None:
    # Sharma, Wu & Dalal (2005), Table 1, pairs 1, 7 and 33.
    assert delta_e2000((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485)) == pytest.approx(2.0425, abs=1e-4)
    assert delta_e2000((50.0, 0.0, 0.0), (50.0, -1.0, 2.0)) == pytest.approx(2.3669, abs=1e-4)
    assert delta_e2000((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514)) == pytest.approx(0.9082, abs=1e-4)


def test_simulation_confuses_what_colour_blind_eyes_confuse() -> None:
    # The classic red-green pair is far apart in normal vision and close for a deuteranope;
    # the matrices leave grey grey.
    red, green = "#e45756", "#54a24b"
    assert delta_e2000(seen(red, "normal"), seen(green, "normal")) > 40
    assert delta_e2000(seen(red, "deuteranopia"), seen(green, "deuteranopia")) < 5
    for vision in MACHADO:
        assert seen("#808080", vision) == pytest.approx(seen("#808080", "normal"), abs=0.6)


def test_the_old_palettes_fail_the_check() -> None:
    """The check can fail: the pastel behaviour colours and Tableau 10 did, for red-green eyes."""
    pastel1 = ("#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6")
    tableau10 = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
                 "#bab0ac")
    for colours in (pastel1, tableau10):
        assert min(closest_pair(colours, v)[0] for v in ("protanopia", "deuteranopia")) < palettes.MIN_DELTA_E


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("name", list(PALETTES))
def test_palette_stays_distinct(name: str, vision: str) -> None:
    colours = PALETTES[name]
    assert len({c.lower() for c in colours}) == len(colours), f"{name}: a colour is used twice"
    distance, a, b = closest_pair(colours, vision)
    assert distance >= palettes.MIN_DELTA_E, f"{name}: {a} and {b} are ΔE00 {distance:.1f} apart in {vision}"


def test_the_map_has_a_colour_for_every_category() -> None:
    from core.text.corpus import category_words

    assert len(category_words()) <= 11  # the checked part of CATEGORY_COLOURS


def test_ink_on_reads_on_every_series_colour() -> None:
    def luminance(hex_colour: str) -> float:
        return float(np.array([0.2126, 0.7152, 0.0722]) @ _linear(hex_colour))

    for colour in palettes.SERIES:
        ink = palettes.ink_on(colour)
        lighter, darker = sorted((luminance(colour), luminance(ink)), reverse=True)
        assert (lighter + 0.05) / (darker + 0.05) >= 4.5, (colour, ink)
