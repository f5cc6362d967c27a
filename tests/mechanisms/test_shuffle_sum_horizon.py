"""ShuffleSum's size check at Shuffle-SE's long horizons: exact in Python integers, on the one quantity the protocol
needs exact, the count of ones among the n d bit messages (decoded in float64, so at most 2^53)."""

import numpy as np
import pytest

from dpaudit.mechanisms.shuffle_sum import ShuffleSum


def test_a_batch_of_shuffle_se_at_a_million_rounds_is_built_and_decodes_exactly():
    """T = 10^6: the largest batch, n = 2^19 users, has n d m ~ 10^23 > 2^63 (refused before), n d ~ 10^14 bits;
    a fast run decodes the users' sum mod m exactly (a flip anywhere has probability <= q/2; fixed seed)."""
    sum_ = ShuffleSum(1.0, 2**19, horizon=10**6)
    n, d, m = sum_.params.n, sum_.d, sum_.params.m
    assert n * d * m > 2**63 and n * d <= 2**53
    release = sum_.run_fast(np.random.default_rng(0), np.zeros(n))
    assert int(release.aggregate) == int(release.messages.sum()) % m


def test_more_bits_than_float64_counts_exactly_are_refused():
    """The twin: n = 2^22 users make n d > 2^53 bit messages, refused with the count named."""
    with pytest.raises(ValueError, match=r"n\*d = .* exceed 2\^53"):
        ShuffleSum(1.0, 2**22, horizon=10**6)
