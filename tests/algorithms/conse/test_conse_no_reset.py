"""DP-ConSE's "means not zeroed at the epoch end" variant (Li, Shi, Simchi-Levi (ICML 2024), Alg. 2 line 16 skipped): exact structure of its releases."""

import numpy as np
import pytest

from dpaudit.algorithms.conse.algorithm import ConSEParams, run_conse
from dpaudit.algorithms.conse.environment import PatientExperiment

SMALL = (0.05, 16.0, 0.01, 8.0)  # the 4^e term binds: epochs of about 2, 9, 37 arrivals
ENV = PatientExperiment(np.array([0.3, 0.6]), np.array([0.7, 0.4]))


def _pair(epsilon):
    data = ENV.sample(np.random.default_rng(0), 600, 3)
    ok = run_conse(ENV, data, ConSEParams(epsilon=epsilon, constants=SMALL), np.random.default_rng(1), release=True)
    bug = run_conse(
        ENV,
        data,
        ConSEParams(epsilon=epsilon, constants=SMALL, reset_means=False),
        np.random.default_rng(1),
        release=True,
    )
    return ok.released, bug.released


def test_means_not_reset_are_running_means_over_epochs():
    """ConSE (no noise), same seed: the buggy epoch-e mean of an arm is the count-weighted mean of the
    correct per-epoch means of epochs 1..e."""
    ok, bug = _pair(None)
    cnt = ok["epoch_counts"]
    assert np.array_equal(cnt, bug["epoch_counts"]) and (cnt[:, :, 2] > 0).any()
    want = np.cumsum(cnt * ok["epoch_means"], axis=2) / np.maximum(np.cumsum(cnt, axis=2), 1.0)
    assert np.allclose(bug["epoch_means"], want)
    assert not np.allclose(bug["epoch_means"][:, :, 1:], ok["epoch_means"][:, :, 1:])


def test_means_not_reset_keep_the_noise():
    """DP-ConSE, same seed: same lengths and noise draws; epoch 1 is unchanged, later epochs differ."""
    ok, bug = _pair(1.0)
    assert np.array_equal(ok["epoch_lengths"], bug["epoch_lengths"])
    assert np.array_equal(ok["epoch_means"][:, :, 0], bug["epoch_means"][:, :, 0])
    assert not np.allclose(ok["epoch_means"][:, :, 1:], bug["epoch_means"][:, :, 1:])


def test_reset_means_validation():
    with pytest.raises(TypeError, match="reset_means"):
        ConSEParams(reset_means=0)
