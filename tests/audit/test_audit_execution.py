"""Chunked execution: identical results on any executor, checkpoints that resume exactly."""

import os

import pytest

from dpaudit.audit import audit, executors, workers

OPTS = dict(claim_epsilon=1.0, samples=12_000, seed=7, chunk_size=2_000)


def laplace(data, rng, size):
    return data + rng.laplace(0.0, 1.0, size)


def test_process_pool_and_serial_are_identical():
    serial = audit(laplace, 1.0, 0.0, executor="serial", **OPTS)
    pooled = audit(laplace, 1.0, 0.0, executor="process", workers=2, **OPTS)
    assert serial == pooled
    assert serial.to_json() == pooled.to_json()


def _blas_threads_here():
    from threadpoolctl import threadpool_info

    return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})


def test_pool_workers_share_the_cores_blas_threads():
    assert workers.blas_threads(1) == (os.cpu_count() or 1)
    assert workers.blas_threads(10**6) == 1
    with workers.process_pool(2) as pool:
        got = pool.submit(_blas_threads_here).result()
    assert got == ([workers.blas_threads(2)] if _blas_threads_here() else [])  # [] when no BLAS is seen


def _no_default_client(distributed):
    with pytest.raises(ValueError, match="No clients found"):
        distributed.default_client()


def test_dask_local_cluster_is_identical():
    # No default client anywhere: the string forms open (and close) a client of their own, and a
    # user's client need not be the default one.
    distributed = pytest.importorskip("distributed")
    serial = audit(laplace, 1.0, 0.0, executor="serial", **OPTS)
    _no_default_client(distributed)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        tcp = cluster.scheduler_address
        assert tcp.startswith("tcp://127.0.0.1:")
        for spec in (f"dask://{tcp[len('tcp://') :]}", f"dask://{tcp}", tcp):
            assert audit(laplace, 1.0, 0.0, executor=spec, **OPTS) == serial, spec
            _no_default_client(distributed)
        with distributed.Client(cluster, set_as_default=False) as client:
            assert audit(laplace, 1.0, 0.0, executor=client, **OPTS) == serial
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        assert cluster.scheduler_address.startswith("inproc://")
        assert audit(laplace, 1.0, 0.0, executor=f"dask://{cluster.scheduler_address}", **OPTS) == serial
    _no_default_client(distributed)


@pytest.mark.parametrize(
    "spec, address",
    [
        ("dask://127.0.0.1:8786", "127.0.0.1:8786"),
        ("dask://scheduler.example:8786", "scheduler.example:8786"),
        ("dask://tcp://10.0.0.1:8786", "tcp://10.0.0.1:8786"),
        ("tcp://10.0.0.1:8786", "tcp://10.0.0.1:8786"),
        ("tls://10.0.0.1:8786", "tls://10.0.0.1:8786"),
        ("inproc://10.0.0.1/123/1", "inproc://10.0.0.1/123/1"),
        ("serial", None),
        ("process", None),
        ("http://10.0.0.1:8786", None),
    ],
)
def test_dask_address_forms(spec, address):
    assert executors.dask_address(spec) == address


@pytest.mark.parametrize("spec", ["dask://", "dask://http://10.0.0.1:8786", "dask://tcp://", "dask://a/b"])
def test_bad_dask_address_is_refused(spec):
    with pytest.raises(ValueError, match="executor"):
        audit(laplace, 1.0, 0.0, executor=spec, **OPTS)


def test_unknown_executor_string_is_refused():
    with pytest.raises(ValueError, match="unknown executor 'http://"):
        audit(laplace, 1.0, 0.0, executor="http://10.0.0.1:8786", **OPTS)


def test_chunk_size_is_part_of_the_result_but_workers_are_not():
    a = audit(laplace, 1.0, 0.0, executor="serial", **OPTS)
    b = audit(laplace, 1.0, 0.0, executor="serial", **{**OPTS, "chunk_size": 3_000})
    assert a.chunk_size != b.chunk_size
    assert a.epsilon_lower != b.epsilon_lower  # different chunk seeds: different runs


def test_auto_executor_is_identical_whether_or_not_it_starts_a_pool(monkeypatch):
    serial = audit(laplace, 1.0, 0.0, executor="serial", **OPTS)
    assert audit(laplace, 1.0, 0.0, **OPTS) == serial  # short work: stays in this process
    monkeypatch.setattr(executors, "_POOL_MIN_SECONDS", 0.0)  # any work: a pool after one chunk
    assert audit(laplace, 1.0, 0.0, workers=2, **OPTS) == serial


def test_unpicklable_target_falls_back_to_this_process_with_a_warning(monkeypatch):
    monkeypatch.setattr(executors, "_POOL_MIN_SECONDS", 0.0)
    target = lambda data, rng, size: data + rng.laplace(0.0, 1.0, size)  # noqa: E731
    with pytest.warns(UserWarning, match="cannot be pickled"):
        fallback = audit(target, 1.0, 0.0, workers=2, **OPTS)
    assert fallback.epsilon_lower == audit(laplace, 1.0, 0.0, executor="serial", **OPTS).epsilon_lower
    with pytest.raises(ValueError, match="picklable"):
        audit(target, 1.0, 0.0, executor="process", **OPTS)


class FailOnCall:
    """Laplace target that raises on its `fail_at`-th call (one call = one side of one chunk)."""

    def __init__(self, fail_at=None):
        self.calls = 0
        self.fail_at = fail_at

    def __call__(self, data, rng, size):
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("simulated crash")
        return data + rng.laplace(0.0, 1.0, size)


def test_checkpoint_resume_matches_an_uninterrupted_run(tmp_path):
    # 12_000 samples: selection 1_200 (1 chunk), estimation 10_800 (6 chunks); 2 calls per chunk
    # plus 2 probe calls. Crash in the 4th estimation chunk.
    reference = audit(FailOnCall(), 1.0, 0.0, executor="serial", **OPTS, float_check="off")
    crashing = FailOnCall(fail_at=2 + 2 + 2 * 3 + 1)
    with pytest.raises(RuntimeError, match="simulated crash"):
        audit(crashing, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS, float_check="off")
    files = sorted(os.listdir(tmp_path))
    assert files == [
        "estimation-000001.npz",
        "estimation-000002.npz",
        "estimation-000003.npz",
        "manifest.json",
        "selection-000000.npz",
    ]
    resumed_target = FailOnCall()
    resumed = audit(resumed_target, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS, float_check="off")
    assert resumed == reference
    assert resumed_target.calls == 2 + 2 * 3  # probe + the three unfinished chunks only
    # A finished checkpoint folder is reused without running any chunk.
    again = FailOnCall()
    assert audit(again, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS, float_check="off") == reference
    assert again.calls == 2


def test_checkpoints_keep_the_floating_point_audit_apart(tmp_path):
    """The floating-point audit of float outputs checkpoints into its own subfolder: a finished folder gives the
    same result, both audits included, without running any chunk."""
    reference = audit(FailOnCall(), 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS)
    assert reference.floating_point is not None
    assert "manifest.json" in os.listdir(tmp_path / "floating-point")
    again = FailOnCall()
    assert audit(again, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS) == reference
    assert again.calls == 2  # the probe only


def test_checkpoint_folder_of_another_audit_is_refused(tmp_path):
    audit(laplace, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS)
    with pytest.raises(ValueError, match=r"different audit.*seed"):
        audit(laplace, 1.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **{**OPTS, "seed": 8})
    with pytest.raises(ValueError, match=r"different audit.*data"):
        audit(laplace, 2.0, 0.0, executor="serial", checkpoint_dir=tmp_path, **OPTS)


def test_progress_bar_goes_to_stderr_only(capsys):
    audit(laplace, 1.0, 0.0, executor="serial", progress=True, **OPTS)
    out, err = capsys.readouterr()
    assert out == ""
    assert "audit" in err
