"""Values no bound can be sound for are refused up front with exit status 2 and the flag named: a subnormal
epsilon or delta (fewer digits than typed, 1/value overflows), fewer than two arms."""

import subprocess
import sys

import pytest


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "args, flag",
    [
        (("budget", "dp-se", "--horizon", "1000", "--epsilon", "1e-320"), "--epsilon"),
        (("budget", "dp-se", "--horizon", "1000", "--at-epsilon", "1e-320"), "--at-epsilon"),
        (("budget", "linucb-sdp-vec", "--horizon", "1000", "--delta", "1e-320"), "--delta"),
        (("calibrate", "dp-se", "--horizon", "1000", "--target-epsilon", "1e-320"), "--target-epsilon"),
        (("regret", "dp-se", "--horizon", "100", "--arms", "0"), "--arms"),
        (("budget", "cdp-se", "--horizon", "100", "--instance", "easy", "--arms", "1"), "--arms"),
    ],
)
def test_refused_before_any_work_naming_the_flag(args, flag):
    out = _run(*args)
    assert out.returncode == 2, out.stderr
    assert flag in out.stderr and "n_arms" not in out.stderr
    assert out.stdout == ""  # nothing printed before the error


def test_smallest_normal_epsilon_still_works():
    """The twin: 2.3e-308, just above the smallest normal double, is accounted."""
    out = _run("budget", "dp-se", "--horizon", "1000", "--epsilon", "2.3e-308")
    assert out.returncode == 0, out.stderr
