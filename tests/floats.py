"""Float32 tolerances that follow rounding, not a fixed number of decimals.

A float32 result carries a relative error of about ``eps = 1.19e-7`` per operation, *relative
to the magnitude of the numbers it was computed from*: a softmax weight computed from scores
of size 20 is only good to ~20·eps, however small the weight is. A fixed ``atol=1e-6`` is then
a coin toss (the [W2-E] flake: an attention weight off by 1.07e-6). These helpers scale the
tolerance with the magnitude of the inputs and the depth of the computation instead.
"""

from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)  # 1.19e-7: one unit in the last place at 1.0


def f32_tolerance(*magnitudes: object, ulps: float = 64.0) -> float:
    """``ulps`` float32 rounding steps at the largest magnitude involved (at least 1.0).

    ``magnitudes`` are arrays or numbers the result was computed from (inputs, intermediates);
    ``ulps`` is how many rounding steps the computation may accumulate (a few dozen for a
    dot product of a few hundred terms or a softmax; more for a whole transformer).
    Example: f32_tolerance(np.array([20.0, -3.0])) -> 64 * 1.19e-7 * 20 ≈ 1.5e-4
    """
    scale = 1.0
    for m in magnitudes:
        values = np.asarray(m, dtype=np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            scale = max(scale, float(np.abs(finite).max()))
    return ulps * EPS32 * scale


def assert_close32(actual: object, expected: object, *, scale: object = None, ulps: float = 64.0) -> None:
    """``actual`` equals ``expected`` up to float32 rounding at the magnitude of ``scale``
    (default: ``expected`` itself). Far tighter than any real bug (a wrong transpose or a
    missing scale is off by 1e-2 or more), never tighter than float32 can promise."""
    expected_arr = np.asarray(expected, dtype=np.float64)
    tol = f32_tolerance(expected_arr if scale is None else scale, ulps=ulps)
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected_arr, rtol=0, atol=tol)
