"""A Dask cluster of worker processes: an audit survives a worker killed in the middle of it, and its result is
bit-identical to the same audit run in this process (every chunk draws from its own seed, wherever it runs)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from dpaudit.audit import audit

OPTS = dict(claim_epsilon=1.0, samples=40_000, seed=11, chunk_size=2_000, float_check="off")


def slow_laplace(data, rng, size):
    """A Laplace count that takes 30 ms per call, so the audit is still running when a worker is killed."""
    time.sleep(0.03)
    return data + rng.laplace(0.0, 1.0, size)


def test_an_audit_survives_a_killed_worker_and_matches_the_serial_run():
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    serial = audit(slow_laplace, 1.0, 0.0, executor="serial", **OPTS)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        client.wait_for_workers(2)
        victim = sorted(client.scheduler_info()["workers"])[0]
        pid = client.run(os.getpid, workers=[victim])[victim]
        killed = threading.Event()

        def kill_when_busy():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # wait until the victim holds a chunk, then kill its process
                if client.processing(workers=[victim]).get(victim):
                    os.kill(pid, signal.SIGKILL)
                    killed.set()
                    return
                time.sleep(0.02)

        killer = threading.Thread(target=kill_when_busy, daemon=True)
        killer.start()
        result = audit(slow_laplace, 1.0, 0.0, executor=client, **OPTS)
        killer.join(timeout=5)
    assert killed.is_set()
    assert result == serial and result.to_json() == serial.to_json()
