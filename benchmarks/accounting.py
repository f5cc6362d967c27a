"""Accounting benchmark: dpaudit's accountants side by side with dp-accounting 0.6.0.

    python -m benchmarks run accounting                     # about a minute on a free core
    python -m benchmarks run accounting --full              # also dp-accounting's 10^4-step streaming run (~1 min+)
    python -m benchmarks run accounting --repeated-only     # the repeated-queries section (~10 s)
    python -m benchmarks run accounting --calibration-only  # calibrate_dp_mechanism section (~15 s)

Prints, for k = 1, 100, 10^4 compositions of Gaussian, Laplace and discrete Laplace releases,
epsilon at delta = 1e-5 and wall time for dpaudit (pld, and "best" over all accountants) and
dp-accounting (PLD and RDP accountants); shuffle amplification for n = 10^3 .. 10^7; the
optimal homogeneous composition where dp-accounting's `advanced_composition` overflows; round-by-round
(streaming) composition against a single call with a count. Noise grows with sqrt(k) so that
epsilon stays of order one. "Repeated queries": a whole-curve audit's pattern (64 delta(eps)
queries on one composed mixed event) next to the times measured before the composed state was
reused (commit d4c2d61). "Calibration": `dp_accounting.calibrate_dp_mechanism` with dpaudit's
`PrivacyAccountant`s next to dp-accounting's own accountants (smallest sigma for k Gaussian
releases, and the exact sigma from the Gaussian's closed-form profile).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import dp_accounting as dpa
from dp_accounting import dp_event
from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from dpaudit import accounting as A
from dpaudit.accounting import composition, shuffle

DELTA = 1e-5


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t


def fresh_backends():
    """Clear dpaudit's per-leaf caches so every timing includes the computation."""
    A.accountants._SHARED.clear()
    shuffle.numerical_epsilon.cache_clear()


def compositions() -> None:
    print(f"== k-fold composition, epsilon at delta = {DELTA:g} (time in s) ==")
    print(
        f"{'mechanism':<34} {'k':>6} {'dpaudit pld':>12} {'t':>7} {'dpaudit best':>13} {'by':>6} {'t':>7}"
        f" {'dp-acc PLD':>11} {'t':>7} {'dp-acc RDP':>11} {'t':>7} {'pld/ref-1':>10}"
    )
    for k in (1, 100, 10_000):
        r = math.sqrt(k)
        cases = [
            (f"Gaussian sigma={2 * r:g}", dpa.GaussianDpEvent(2 * r)),
            (f"Laplace b={2.4 * r:g}", dpa.LaplaceDpEvent(2.4 * r)),
            (
                f"discrete Laplace a={0.42 / r:.4g}, D=1",
                dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.42 / r, sensitivity=1),
            ),
        ]
        for label, ev in cases:
            fresh_backends()
            composed = dpa.SelfComposedDpEvent(ev, k)
            ours, t_ours = timed(lambda: A.epsilon(composed, DELTA, "pld"))  # noqa: B023 (called within this iteration)
            fresh_backends()
            best, t_best = timed(lambda: A.epsilon(composed, DELTA))  # noqa: B023 (called within this iteration)
            by = min(A.supporting_accountants(composed), key=lambda n: A.epsilon(composed, DELTA, n))
            ref, t_ref = timed(lambda: pld_privacy_accountant.PLDAccountant().compose(ev, k).get_epsilon(DELTA))  # noqa: B023 (called within this iteration)
            if isinstance(ev, dp_event.DiscreteLaplaceDpEvent):
                rdp, t_rdp = float("nan"), float("nan")  # not supported by dp-accounting's RDP
            else:
                rdp, t_rdp = timed(lambda: rdp_privacy_accountant.RdpAccountant().compose(ev, k).get_epsilon(DELTA))  # noqa: B023 (called within this iteration)
            print(
                f"{label:<34} {k:>6} {ours:>12.5f} {t_ours:>7.3f} {best:>13.5f} {by:>6} {t_best:>7.3f}"
                f" {ref:>11.5f} {t_ref:>7.3f} {rdp:>11.5f} {t_rdp:>7.3f} {ours / ref - 1:>10.2e}"
            )


def shuffling() -> None:
    print("\n== amplification by shuffling, eps0 = 1, delta = 1e-6 (FMT 2021) ==")
    print(f"{'n':>10} {'numerical':>11} {'t (s)':>8} {'closed form':>12} {'accountant shuffle':>19} {'t (s)':>8}")
    for n in (10**3, 10**4, 10**5, 10**6, 10**7):
        fresh_backends()
        num, t_num = timed(lambda: shuffle.numerical_epsilon(1.0, n, 1e-6))  # noqa: B023 (called within this iteration)
        cf = shuffle.closed_form_epsilon(1.0, n, 1e-6) if shuffle.closed_form_applies(1.0, n, 1e-6) else float("nan")
        fresh_backends()
        acc, t_acc = timed(lambda: A.epsilon(A.ShuffledDpEvent(local_epsilon=1.0, num_users=n), 1e-6, "shuffle"))  # noqa: B023 (called within this iteration)
        print(f"{n:>10} {num:>11.5f} {t_num:>8.4f} {cf:>12.5f} {acc:>19.5f} {t_acc:>8.4f}")


def optimal_composition() -> None:
    print("\n== optimal homogeneous composition (KOV 2015 Thm 3.3), eps0 = 0.1, delta = 1e-5 ==")
    for k in (100, 1000, 10_000):
        ours, t = timed(lambda: composition.OptimalHomogeneous(0.1, 0.0, k).epsilon(DELTA))  # noqa: B023 (called within this iteration)
        try:
            ref, t_ref = timed(
                lambda: pld_accountant.advanced_composition(
                    pld_common.DifferentialPrivacyParameters(0.1, 0.0),
                    k,  # noqa: B023 (called within this iteration)
                    DELTA,
                )
            )
            ref_s = f"{ref:.5f} ({t_ref:.3f} s, grid value)"
        except OverflowError as exc:
            ref_s = f"OverflowError: {exc}"
        drv = composition.drv_epsilon(0.1, 0.0, k, DELTA)
        print(f"k={k:>6}: dpaudit {ours:.5f} ({t:.3f} s)  DRV {drv:.5f}  dp-accounting advanced_composition: {ref_s}")


def streaming(full: bool) -> None:
    print("\n== streaming: 10^4 releases composed one call at a time vs one call with count=10^4 ==")
    for label, ev in (("Gaussian sigma=200", dpa.GaussianDpEvent(200.0)), ("Laplace b=240", dpa.LaplaceDpEvent(240.0))):
        for name in ("pld", "best"):
            fresh_backends()

            def one_by_one():
                a = A.Accountant(name)  # noqa: B023 (called within this iteration)
                for _ in range(10_000):
                    a.compose(ev)  # noqa: B023 (called within this iteration)
                return a.epsilon(DELTA)

            e1, t1 = timed(one_by_one)
            fresh_backends()
            e2, t2 = timed(lambda: A.Accountant(name).compose(ev, 10_000).epsilon(DELTA))  # noqa: B023 (called within this iteration)
            print(
                f"dpaudit {name:<5} {label:<19}: one by one {e1:.5f} in {t1:.3f} s; count=10^4 {e2:.5f} in {t2:.3f} s"
            )
    g = dpa.GaussianDpEvent(200.0)
    ref_single, t_single = timed(lambda: pld_privacy_accountant.PLDAccountant().compose(g, 10_000).get_epsilon(DELTA))
    n = 10_000 if full else 1_000

    def ref_stream():
        a = pld_privacy_accountant.PLDAccountant()
        for _ in range(n):
            a.compose(g)
        return a.get_epsilon(DELTA)

    e_ref, t_ref = timed(ref_stream)
    print(
        f"dp-accounting PLD Gaussian sigma=200: count=10^4 {ref_single:.5f} in {t_single:.3f} s; one by one x{n}"
        f" {e_ref:.5f} in {t_ref:.2f} s" + ("" if full else " (10^3 steps only; --full for 10^4)")
    )


def mixed_event() -> dpa.DpEvent:
    """Gaussian x50 + Laplace x10 + Poisson-subsampled Gaussian x1000 (q = 0.01): the issue's mix."""
    return dpa.ComposedDpEvent(
        [
            dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.5), 50),
            dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 10),
            dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.1)), 1000),
        ]
    )


# seconds per row at commit d4c2d61 (PLD recomposed per query; the rdp support check and the
# query each ran dp-accounting's per-order Python loop over 5.2 million terms), measured with
# this function on the shared 2-core machine
_BEFORE = (74.77, 0.0005, 2.374, 0.3926, 0.667, 0.485, 0.5585, 79.97, 1.381)


def repeated_queries() -> None:
    print("\n== repeated queries on one mixed event (Gaussian x50 + Laplace x10 + Poisson-sampled Gaussian x1000) ==")
    ev = mixed_event()
    grid = [0.5 * 16 ** (j / 63) for j in range(64)]  # 64 epsilons, geometric in [0.5, 8]
    rows = []
    fresh_backends()
    rows.append(("rdp epsilon(1e-5), first (fresh caches)",) + timed(lambda: A.epsilon(ev, DELTA, "rdp")))
    rows.append(("rdp epsilon(1e-6), next query",) + timed(lambda: A.epsilon(ev, 1e-6, "rdp")))
    fresh_backends()
    acct = A.Accountant("pld").compose(ev)
    rows.append(("pld Accountant delta(eps), first",) + timed(lambda: acct.delta(grid[0])))
    values, t = timed(lambda: [acct.delta(e) for e in grid[1:]])
    rows.append((f"pld Accountant delta(eps), {len(grid) - 1} more (mean)", values[-1], t / (len(grid) - 1)))
    rows.append(("pld Accountant epsilon(1e-5) after them",) + timed(lambda: acct.epsilon(DELTA)))
    rows.append(("functional delta(event, 1.0, 'pld'), first",) + timed(lambda: A.delta(ev, 1.0, "pld")))
    times = [timed(lambda: A.delta(mixed_event(), 1.0 + 0.01 * i, "pld"))[1] for i in range(1, 9)]  # noqa: B023 (called within this iteration)
    rows.append(
        ("functional delta(event, eps, 'pld'), repeated (mean)", A.delta(ev, 1.08, "pld"), statistics.mean(times))
    )
    fresh_backends()
    rows.append(("best epsilon(1e-5), first (fresh caches)",) + timed(lambda: A.epsilon(ev, DELTA)))
    rows.append(("best epsilon(1e-6), next query",) + timed(lambda: A.epsilon(ev, 1e-6)))
    print(f"{'query':<54} {'value':>10} {'t (s)':>9} {'before (s)':>11}")
    for (label, value, t), before in zip(rows, _BEFORE):
        print(f"{label:<54} {value:>10.6g} {t:>9.4f} {before:>11.4f}")


def calibration() -> None:
    from scipy.stats import norm

    eps, k = 1.0, 100
    print(f"== calibrate_dp_mechanism: smallest sigma for {k} Gaussian releases at (eps={eps:g}, delta={DELTA:g}) ==")

    def exact_delta(sigma: float) -> float:  # Balle, Wang, ICML 2018, Thm 8, with mu = sqrt(k)/sigma
        mu = math.sqrt(k) / sigma
        return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    lo, hi = 1.0, 1000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if exact_delta(mid) <= DELTA else (mid, hi)
    print(f"  {'exact':<22} sigma {hi:.8f}")
    make = lambda s: dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), k)  # noqa: E731
    bracket = dpa.ExplicitBracketInterval(10.0, 100.0)
    rows = [(f"dpaudit {n}", lambda n=n: A.PrivacyAccountant(n)) for n in ("best", "pld", "rdp")]
    rows += [
        ("dp-accounting RDP", rdp_privacy_accountant.RdpAccountant),
        ("dp-accounting PLD", pld_privacy_accountant.PLDAccountant),
    ]
    for label, fresh in rows:
        fresh_backends()
        sigma, t = timed(lambda: dpa.calibrate_dp_mechanism(fresh, make, eps, DELTA, bracket_interval=bracket))  # noqa: B023 (called within this iteration)
        print(f"  {label:<22} sigma {sigma:.8f}  true delta {exact_delta(sigma):.4g}  {t:7.3f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="run dp-accounting's 10^4-step streaming composition")
    parser.add_argument("--repeated-only", action="store_true", help="run only the repeated-queries section")
    parser.add_argument("--calibration-only", action="store_true", help="run only the calibration section")
    args = parser.parse_args(argv)
    if args.repeated_only:
        repeated_queries()
        return 0
    if args.calibration_only:
        calibration()
        return 0
    compositions()
    shuffling()
    optimal_composition()
    streaming(args.full)
    repeated_queries()
    calibration()
    return 0


if __name__ == "__main__":
    sys.exit(main())
