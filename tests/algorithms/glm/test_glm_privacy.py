"""Sarmasarkar (shuffle/joint DP GLM bandits) privacy declarations (Thms 5.1 and 6.2): the paper's claim next to the corrected accounting."""

import math

import dp_accounting
import pytest

from dpaudit import accounting
from dpaudit.accounting.events import ParallelComposedDpEvent
from dpaudit.algorithms.glm.claims import glm_tree_events
from dpaudit.algorithms.glm.privacy import private_glm_privacy, shuffle_glm_privacy
from dpaudit.algorithms.glm.private_glm import PrivateGLMParams, private_glm_constants
from dpaudit.algorithms.glm.shuffle_glm import ShuffleGLMParams

KS = 2.5066  # κ* of the probit instances of Table 2


@pytest.mark.parametrize("calibration", ["code", "paper"])
@pytest.mark.parametrize("eps", [2.0, 8.0])
def test_private_glm_claim_and_structure(calibration, eps):
    p = private_glm_privacy(PrivateGLMParams(epsilon=eps, tree_calibration=calibration), 5000, 3, 18.3, KS, 2.0)
    assert (p.claim.epsilon, p.claim.delta) == (eps, 0.02) and p.trust_model == "joint"
    # the paper composes the two trees and the two optimiser sequences in parallel; the correction sequentially
    parts = p.paper_event.events
    assert isinstance(parts[0], ParallelComposedDpEvent) and isinstance(parts[2], ParallelComposedDpEvent)
    assert isinstance(p.event, dp_accounting.ComposedDpEvent) and len(p.event.events) == 4
    corr = p.corrected.epsilon
    assert math.isfinite(corr) and corr > 0
    # sequential composition never undercuts the parallel one it replaces
    seq = dp_accounting.ComposedDpEvent(list(parts[0].events) + list(parts[2].events))
    assert accounting.epsilon(seq, 0.02) >= accounting.epsilon(parts[0], 0.01)


def test_paper_tree_calibration_underestimates_the_v_tree():
    """Lemma I.4 calibrates the V tree to 1/κ*; its leaves have Frobenius change up to √2: κ*·√2 more."""
    c = private_glm_constants(PrivateGLMParams(epsilon=4.0, tree_calibration="paper"), 5000, 3, 18.3, KS, 2.0)
    claim, corr = glm_tree_events(c.sigma_v, 5000, 3, KS, tree="V")
    ratio = claim.event.noise_multiplier / corr.event.noise_multiplier
    assert ratio == pytest.approx(KS * math.sqrt(2), rel=1e-9)
    assert accounting.epsilon(corr, 1e-3) > 3 * accounting.epsilon(claim, 1e-3)


@pytest.mark.parametrize("eps", [2.0, 4.0])
def test_shuffle_glm_proof_step_exceeds_claim_exact_accounting_does_not(eps):
    """The randomizer's input spans [0, 2Δ] (count shift 2g), so the paper's proof step, redone on the
    real range, costs more than the claim; the exact binomial-count accounting of the same releases
    is below the claim (the claim holds, its proof does not)."""
    p = shuffle_glm_privacy(ShuffleGLMParams(epsilon=eps), [5000], 3, [50])
    assert p.trust_model == "shuffle" and p.claim.epsilon == eps
    assert p.accounted_epsilon("paper_event") == pytest.approx(eps, rel=1e-3)
    assert p.accounted_epsilon("proof_step") > 1.2 * eps
    assert p.corrected.epsilon <= eps


def test_shuffle_batches_compose_in_parallel():
    one = shuffle_glm_privacy(ShuffleGLMParams(epsilon=4.0), [800], 3, [20])
    two = shuffle_glm_privacy(ShuffleGLMParams(epsilon=4.0), [800, 800], 3, [20, 20])
    assert two.corrected.epsilon == pytest.approx(one.corrected.epsilon, rel=1e-9)


def test_validation():
    with pytest.raises(ValueError, match="epsilon"):
        private_glm_privacy(PrivateGLMParams(epsilon=None), 100, 3, 10.0, KS, 2.0)
    with pytest.raises(ValueError, match="epsilon"):
        shuffle_glm_privacy(ShuffleGLMParams(epsilon=None), [100], 3)
    with pytest.raises(ValueError, match="batch_sizes"):
        shuffle_glm_privacy(ShuffleGLMParams(epsilon=1.0), [], 3)
    with pytest.raises(ValueError, match="iterations"):
        shuffle_glm_privacy(ShuffleGLMParams(epsilon=1.0), [100, 100], 3, [5])
