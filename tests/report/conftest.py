"""A synthetic report (no auditing): two algorithms, a found violation, a regret run, a trade-off curve."""

import numpy as np
import pytest

from dpaudit.report import build_report


def _claim(label, eps, lower, expect, by=None):
    verdict = "violation" if lower > eps else "consistent"
    return {
        "label": label,
        "epsilon": eps,
        "delta": 0.0,
        "accountant": "pure" if by else "stated",
        "by_accountant": by or {},
        "source": "Thm 6",
        "expect": expect,
        "epsilon_lower": lower,
        "confidence": 0.975,
        "pair": 0,
        "verdict": verdict,
        "tightness": lower / eps,
        "ok": verdict == expect,
    }


def _entry(name, alg, claims, regret=None, variant="", tradeoff=True):
    audit = {
        "delta": 0.0,
        "claim_epsilon": 1.0,
        "samples": 1000,
        "confidence": 0.975,
        "seed": 7,
        "epsilon_lower": max(c["epsilon_lower"] for c in claims),
        "verdict": "violation",
        "seconds": 0.1,
        "pair": 0,
    }
    if tradeoff:
        a = np.linspace(0, 1, 21)
        audit["tradeoff"] = {"alpha": a.tolist(), "beta": np.clip(1 - 2 * a, 0, 1).tolist()}
    return {
        "name": name,
        "algorithm": alg,
        "variant": variant,
        "description": f"{alg} <b>audit</b>.",
        "observable": "black-box",
        "observable_description": "actions",
        "expect": "violation" if any(c["expect"] == "violation" for c in claims) else "consistent",
        "source": "Li, Shi, Simchi-Levi (ICML 2024), Sec. 6",
        "seed": 11,
        "pairs": [{"relation": "one-user", "description": "X(t)=(0,1) vs (1,0)"}],
        "audits": [audit],
        "claims": claims,
        "regret": regret,
        "error": None,
        "ok": all(c["ok"] for c in claims),
        "seconds": 0.2,
    }


@pytest.fixture
def sample_report():
    cp = np.array([1, 10, 100])
    regret = {
        "algorithm": "ftnl",
        "horizon": 100,
        "runs": 4,
        "seed": 0,
        "params": {"epsilon": 1.0},
        "final_mean": 5.0,
        "final_ci": [4.0, 6.0],
        "checkpoints": cp.tolist(),
        "mean": [0.5, 2.0, 5.0],
        "lower": [0.4, 1.5, 4.0],
        "upper": [0.6, 2.5, 6.0],
        "seconds": 0.01,
    }
    entries = [
        _entry(
            "ftnl-rnm",
            "ftnl",
            [
                _claim("paper", 1.0, 1.52, "violation"),
                _claim("corrected", 2.0, 1.52, "consistent", {"pure": 2.0, "pld": 1.9}),
            ],
            regret,
        ),
        _entry(
            "dist-dp-se-inverted-polya",
            "dist-dp-se",
            [_claim("paper", 1.0, float("inf"), "violation")],
            variant="inverted Polya parameter (public code)",
            tradeoff=False,
        ),
        _entry("anytime-lazy-ucb", "anytime-lazy-ucb", [_claim("paper", 1.0, 0.93, "consistent")]),
    ]
    settings = {
        "seed": 0,
        "samples": None,
        "quick": True,
        "confidence": 0.95,
        "per_audit_confidence": 0.975,
        "audit_calls": 2,
        "executor": "local",
        "regret": True,
        "names": [e["name"] for e in entries],
    }
    return build_report(entries, settings=settings, command=["dpaudit", "audit"], seconds=1.5)


@pytest.fixture
def make_claim():
    """_claim(label, eps, lower, expect, by=None): one claim record."""
    return _claim


@pytest.fixture
def make_entry():
    """_entry(name, alg, claims, regret=None, variant="", tradeoff=True): one entry record."""
    return _entry
