"""ConSE and DP-ConSE in the shape of `dpaudit.interface.PrivateAlgorithm`.

Li, Shi, Simchi-Levi, "Privacy Preserving Adaptive Experiment Design", ICML 2024: Algorithm 1 (ConSE,
`params.epsilon` None) and Algorithm 2 (DP-ConSE), whose claim is Theorem 3.5 ((ε, 1/n)-DP).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpaudit.algorithms.conse.algorithm import ConSEParams, ConSEResult, conse_target, run_conse
from dpaudit.algorithms.conse.environment import PatientData, PatientExperiment
from dpaudit.algorithms.conse.privacy import conse_privacy
from dpaudit.interface import Target
from dpaudit.privacy import NON_PRIVATE, Privacy
from dpaudit.validation import check_positive_int

__all__ = ["ConSE"]


@dataclasses.dataclass(frozen=True)
class ConSE:
    """ConSE / DP-ConSE with `params` on the patient population `env` (outcome means per type)."""

    env: PatientExperiment
    params: ConSEParams

    @property
    def name(self) -> str:
        """ "dp-conse" when private, else "conse"."""
        return "dp-conse" if self.params.private else "conse"

    def run(self, data: PatientData, rng: np.random.Generator, *, release: bool = False) -> ConSEResult:
        """Every run (row) of `data`; `release` keeps the phase-1 epoch releases."""
        return run_conse(self.env, data, self.params, rng, release=release)

    def target(self, observable: str = "estimates", after: int = 0) -> Target:
        """See `conse_target`: "estimates", "rct_lengths", "actions_after", "epoch_lengths", "epoch_means"."""
        return conse_target(self.env, self.params, observable, after)

    def privacy(self, horizon: int, *, types: int, rct_length_floor: float | None = None) -> Privacy:
        """Claimed (Thm 3.5) and corrected privacy for n = `horizon` units of M = `types` types
        (`conse_privacy`); ConSE claims none."""
        check_positive_int(types, "types")
        if not self.params.private:
            check_positive_int(horizon, "horizon")
            return NON_PRIVATE
        return conse_privacy(self.params, horizon, types, rct_length_floor=rct_length_floor)
