"""A large heat map as one image: the matrix coloured here, exactly as Vega colours a cell.

Vega draws one rectangle per cell, each run through its expression interpreter in the browser
(Streamlit's pages forbid ``eval``): 128 × 128 cells kept Chromium busy for ~0.6 s. A matrix
this size is instead coloured on the server with Vega's own colour scheme (the same stops,
interpolated the same way), sent as one PNG (a few KiB) and drawn as an ``image`` mark whose
axes and colour legend are ordinary Vega-Lite scales, so it looks like the cell-by-cell chart
and reads the same. What it cannot do is name the value under the mouse.
"""

from __future__ import annotations

import base64
import io

import numpy as np

# Vega's schemes (vega-scale's palette strings: 11 stops each), as bundled by Streamlit 1.67.
# Vega interpolates between stops linearly in RGB (d3.piecewise(d3.interpolateRgb)).
SCHEME_STOPS = {
    "redblue": "8c0d25bf363adf745ef4ae91fbdbc9f2efeed2e5ef9dcae15da2cb2f78b3134b85",
    "blues": "cfe1f2bed8eca8cee58fc1de74b2d75ba3cf4592c63181bd206fb2125ca40a4a90",
}
MISSING_RGB = (0x9E, 0x9E, 0x9E)  # NaN and ±inf cells: grey, as the cell-by-cell chart draws them


def stops(scheme: str) -> np.ndarray:
    """The scheme's colour stops as an (n, 3) float array of 0-255 values."""
    text = SCHEME_STOPS[scheme]
    return np.array([[int(text[i + c:i + c + 2], 16) for c in (0, 2, 4)] for i in range(0, len(text), 6)], dtype=float)


def scheme_colours(t: np.ndarray, scheme: str) -> np.ndarray:
    """Colours at positions ``t`` in [0, 1] along the scheme (clamped), as uint8 RGB.

    Example: scheme_colours(np.array([0.0, 1.0]), "redblue") -> [[140, 13, 37], [19, 75, 133]]
    """
    ramp = stops(scheme)
    segments = len(ramp) - 1
    t = np.asarray(t, dtype=float)
    position = np.clip(np.where(np.isfinite(t), t, 0.0), 0.0, 1.0) * segments  # NaN: the caller greys it
    index = np.minimum(position.astype(int), segments - 1)
    local = (position - index)[..., None]
    rgb = ramp[index] * (1.0 - local) + ramp[index + 1] * local
    return np.floor(rgb + 0.5).astype(np.uint8)  # d3 rounds each channel (Math.round: halves up)


def colour_positions(values: np.ndarray, *, symmetric: bool, bound: float, low: float = 0.0,
                     high: float = 1.0) -> np.ndarray:
    """Where each value falls along the scheme, as Vega's scale puts it.

    Symmetric: the domain [−bound, bound], reversed (the "redblue" scheme runs red → blue; the
    chart shows negative blue, positive red). Otherwise the data's [min, max] mapped onto the
    scheme's extent [``low``, ``high``] (the sequential blues start at 0.12, visible on dark).
    """
    values = np.asarray(values, dtype=float)
    if symmetric:
        return 1.0 - (values + bound) / (2.0 * bound)
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    share = (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)
    return low + share * (high - low)


def heat_png(values: np.ndarray, *, symmetric: bool, bound: float, scheme: str, extent: tuple[float, float] = (0.0, 1.0)) -> bytes:
    """The matrix as a PNG, one pixel per cell (row 0 at the top).

    Example: heat_png(np.eye(3), symmetric=True, bound=1.0, scheme="redblue")[:4] -> b"\\x89PNG"
    """
    from PIL import Image

    values = np.asarray(values, dtype=float)
    rgb = scheme_colours(colour_positions(values, symmetric=symmetric, bound=bound, low=extent[0], high=extent[1]),
                         scheme)
    rgb[~np.isfinite(values)] = MISSING_RGB
    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
