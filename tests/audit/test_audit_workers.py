"""Process-pool workers end with the audit process, even when it is killed with SIGKILL."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from dpaudit.audit import audit

    FOLDER = sys.argv[1]

    def slow(data, rng, size):
        open(os.path.join(FOLDER, f"worker-{os.getpid()}"), "w").close()
        time.sleep(0.5)
        return data + rng.laplace(0.0, 1.0, size)

    if __name__ == "__main__":
        audit(slow, 1.0, 0.0, claim_epsilon=1.0, samples=400_000, chunk_size=2_000, executor="process", workers=2)
""")


def _running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (an orphan's zombie may wait for a busy init)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pool_workers_exit_when_the_audit_is_killed(tmp_path):
    script = tmp_path / "audit_script.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.1)
            # the probe's two runs happen in the audit process itself
            workers = {int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")} - {proc.pid}
        assert len(workers) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_running(pid) for pid in workers):
            time.sleep(0.1)
        left = [pid for pid in workers if _running(pid)]
        for pid in left:  # do not leave them behind if the test fails
            os.kill(pid, signal.SIGKILL)
        assert not left, f"pool workers {left} outlived the killed audit"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_parent_check_sees_a_dead_parent():
    from dpaudit.audit.workers import _parent_gone

    assert not _parent_gone(os.getpid(), os.getppid())
    assert _parent_gone(os.getpid(), os.getppid() + 1)  # reparented
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert _parent_gone(dead.pid, os.getppid())
