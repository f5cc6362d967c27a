"""Source text of small user audit modules for the tests of this folder."""

import textwrap

LAPLACE_COUNT = """
    import numpy as np
    import dpaudit

    D0, D1 = np.array([0, 1, 1]), np.array([1, 1, 1])

    def make(scale):
        def count(data, rng, size):
            return data.sum() + rng.laplace(0.0, scale, size)
        return count

    dpaudit.register_audit(name="shop.count", claim_epsilon={eps}, d0=D0, d1=D1, samples={samples})(make({scale}))
"""


def laplace_module(eps=1.0, scale=1.0, samples=4000) -> str:
    """A module auditing a Laplace count of `scale` against `eps` (epsilon-DP holds iff 1/scale <= eps)."""
    return textwrap.dedent(LAPLACE_COUNT).format(eps=eps, scale=scale, samples=samples)
