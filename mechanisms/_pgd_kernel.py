"""Optional compiled round of P_GD's "bits" sampler (`dpaudit.mechanisms.shuffle_gd._GlmRounding`), with numba.

Two fused passes over the users do what the numpy path does in about twenty array operations: the link read
from its table, the norm clipping of c = μ(⟨x, θ⟩) − r, q = s − B/2¹⁶, the count of ⌈q⌉ per run and label, and
the list of entries whose ⌈q⌉ the table's error could change. Those entries are then rounded from the exact link
by the same numpy code as without numba, so the released counts are the same on the same draws with or without
it (the kernel only decides entries whose decision the error bound proves). Installed with `pip install
dpaudit[fast]`; without numba, `table_round` is None and the numpy path runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:
    import numba

    _compile: Callable[..., Any] | None = numba.njit(cache=True, nogil=True)
except ImportError:  # the numpy path of _GlmRounding is used instead
    _compile = None

__all__ = ["table_round"]


def _table_round(
    theta_h, shift, last, x_t, values, slopes, r, x_norm, lip, x_scaled, offset, bits, unit, margin, counts, flag, c
):
    """flag[a, k, i] = ⌈q⌉ − q < margin or > 1 − unit − margin, for q = x_scaled·c + offset − B·unit with c the
    tabled link at u = ⟨x, θ/h⟩ + shift minus r, clipped to |c|‖x‖ <= lip; counts[a, k] = Σ ⌈q⌉ over the
    unflagged users. Returns 0, or −1 if some u leaves [0, last] (then the outputs are not to be used)."""
    runs, d, n = x_t.shape
    high = 1.0 - unit - margin
    for a in range(runs):
        inside = True
        for i in range(n):
            u = shift
            for k in range(d):
                u += theta_h[a, k] * x_t[a, k, i]
            inside &= (u >= 0.0) & (u <= last)
            u = min(max(u, 0.0), last)
            j = int(u)
            ci = values[j] + (u - j) * slopes[j] - r[a, i]
            g = abs(ci) * x_norm[a, i]
            c[i] = ci * (lip / g) if g > lip else ci
        if not inside:
            return -1
        for k in range(d):
            total = 0.0
            for i in range(n):
                q = x_scaled[a, k, i] * c[i] + (offset - bits[a, k, i] * unit)
                m = np.ceil(q)
                gap = m - q
                f = (gap < margin) | (gap > high)
                flag[a, k, i] = f
                total += 0.0 if f else m
            counts[a, k] = total
    return 0


table_round = None if _compile is None else _compile(_table_round)
