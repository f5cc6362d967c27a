"""Noise sources in DP-SE and Dist-DP-SE: the default keeps the releases bit for bit, a source is what draws the
noise, and a source is checked (exact properties and pinned seeded outputs, no statistical test)."""

import dataclasses
import hashlib
from typing import ClassVar

import numpy as np
import pytest

from dpaudit.algorithms.mab.batch_se import BatchSE
from dpaudit.algorithms.mab.elimination import DPSE
from dpaudit.algorithms.mab.environment import BernoulliArms
from dpaudit.audits.mab.targets import BatchRelease
from dpaudit.mechanisms.noise_source import DPAUDIT_NOISE, DpauditNoise, NoiseSource, check_noise_source

ENV = BernoulliArms(np.array([0.9, 0.6, 0.5]))


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class Shift:
    """A test source: values + `offset` (no randomness), so what the algorithm releases shows where its noise went."""

    offset: int = 1000
    name: ClassVar[str] = "shift"
    reproducible: ClassVar[bool] = True

    def laplace(self, rng, values, scale):
        return np.asarray(values, dtype=float) + self.offset

    def discrete_laplace(self, rng, values, scale):
        return np.asarray(values, dtype=np.int64) + self.offset


@dataclasses.dataclass(frozen=True)
class NumpyLaplace:
    """The draw DP-SE made before noise sources: values + rng.laplace(0, scale, shape)."""

    name: ClassVar[str] = "numpy"
    reproducible: ClassVar[bool] = True

    def laplace(self, rng, values, scale):
        v = np.asarray(values, dtype=float)
        return v + rng.laplace(0.0, scale, v.shape)

    def discrete_laplace(self, rng, values, scale):
        raise AssertionError("DP-SE draws no discrete noise")


# sha256 prefixes of the releases drawn by the algorithms before noise sources existed (same seeds)
BEFORE = {
    "per-arm": ("2afe6e015350b464", "9081cbd02ff994fc"),
    "shared": ("9770a5a5190fbd01", "9081cbd02ff994fc"),
    "dist-dp": ("e47575aa6434ca98", "16dce2c08f1c2560"),
    "release": "f9c26bd7ad5a7a5e",
}


@pytest.mark.parametrize("noise", ["per-arm", "shared"])
def test_dpse_default_source_releases_what_it_did_before(noise):
    for algo in (DPSE(1.0, 0.5, noise=noise), DPSE(1.0, 0.5, noise=noise, noise_source=DpauditNoise())):
        out = algo.run(ENV, np.random.default_rng(7), 5, 20_000)
        assert (digest(np.nan_to_num(out.statistics["noisy_sums"], nan=-1.0)), digest(out.pulls())) == BEFORE[noise]


@pytest.mark.parametrize("noise", ["per-arm", "shared"])
def test_dpse_default_source_is_numpys_laplace_draw_for_draw(noise):
    runs = [
        DPSE(0.5, noise=noise, noise_source=s).run(ENV, np.random.default_rng(3), 4, 5_000)
        for s in (DPAUDIT_NOISE, NumpyLaplace())
    ]
    assert np.array_equal(runs[0].statistics["noisy_sums"], runs[1].statistics["noisy_sums"], equal_nan=True)
    assert np.array_equal(runs[0].pulls(), runs[1].pulls())


def test_dist_dp_se_default_source_releases_what_it_did_before():
    out = BatchSE("dist-dp", 1.0).run(ENV, np.random.default_rng(7), 5, 20_000)
    assert digest(out.statistics["aggregates"]) == BEFORE["dist-dp"][0] == digest(out.statistics["releases"])
    assert digest(out.pulls()) == BEFORE["dist-dp"][1]
    algo = BatchSE("dist-dp", 1.0, base=4, p=0.1, noise_source=DpauditNoise())
    assert digest(BatchRelease(algo, 4**8, 10**6)(np.ones(1), np.random.default_rng(3), 1000)) == BEFORE["release"]


def test_dpse_adds_its_noise_through_the_source():
    shifted = DPSE(1.0, 0.5, noise_source=Shift()).run(ENV, np.random.default_rng(0), 3, 5_000)
    sums = shifted.statistics["noisy_sums"][:, 0, :]  # epoch 1: every arm released, its sum + 1000
    assert np.all((sums >= 1000) & (sums <= 1000 + shifted.lengths[0, 0])) and np.all(sums == np.round(sums))
    shared = DPSE(1.0, 0.5, noise="shared", noise_source=Shift()).run(ENV, np.random.default_rng(0), 3, 5_000)
    assert np.all(shared.statistics["noisy_sums"][:, 0, :] >= 1000)


def test_dist_dp_se_draws_its_total_noise_from_the_source():
    algo = BatchSE("dist-dp", 1.0, base=4, p=0.1, noise_source=Shift(7))
    assert np.array_equal(algo.noise_total(np.random.default_rng(0), 5, 16, 1000), np.full(5, 7))
    view = BatchRelease(algo, 16, 1000)(np.zeros(1), np.random.default_rng(0), 4)  # x̂_1 = 0: the view is 7 mod m
    assert np.array_equal(view, np.full(4, 7))


def test_check_noise_source_names_the_parameter():
    assert check_noise_source(DPAUDIT_NOISE) is DPAUDIT_NOISE and isinstance(Shift(), NoiseSource)
    for bad in (object(), "opendp", DpauditNoise, None):
        with pytest.raises(TypeError, match="noise_source"):
            check_noise_source(bad)
    with pytest.raises(TypeError, match="noise_source"):
        DPSE(1.0, noise_source="opendp")


@pytest.mark.parametrize(
    "kwargs", [dict(protocol="local"), dict(protocol="central"), dict(path="users"), dict(polya="inverted")]
)
def test_batch_se_takes_another_source_only_for_dist_dp_on_the_batch_path(kwargs):
    options = {"protocol": "dist-dp", **kwargs}
    BatchSE(**options)  # the default source: every protocol and path
    with pytest.raises(ValueError, match="noise_source"):
        BatchSE(**options, noise_source=Shift())


def test_algorithms_with_a_source_stay_hashable_and_comparable():
    assert DPSE(1.0) == DPSE(1.0, noise_source=DpauditNoise()) != DPSE(1.0, noise_source=Shift())
    assert (
        len(
            {
                BatchSE("dist-dp"),
                BatchSE("dist-dp", noise_source=DpauditNoise()),
                BatchSE("dist-dp", noise_source=Shift()),
            }
        )
        == 2
    )
