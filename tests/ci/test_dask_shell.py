"""`dpaudit audit --executor dask://…` against a scheduler and two workers started as from a shell
(`dask scheduler`, `dask worker`), each its own process; the processes are stopped in teardown.

Tiny samples keep it fast; skipped only when `distributed` is not installed.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest
from ci_modules import laplace_module

from dpaudit.cli import main

distributed = pytest.importorskip("distributed")


def _dask(*args: str) -> list[str]:
    script = pathlib.Path(sys.executable).with_name("dask")
    return [str(script), *args] if script.is_file() else [sys.executable, "-m", "dask", *args]


@pytest.fixture
def cluster(project, tmp_path):
    """(scheduler address, project): `dask scheduler` and two `dask worker` processes in the project folder,
    with the project on PYTHONPATH: the workers import the user's audit module to run its target, and
    the scheduler to read the task graph (distributed unpickles tasks there too)."""
    file = tmp_path / "scheduler.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project.root), os.environ.get("PYTHONPATH", "")]))
    common = dict(cwd=project.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [
        subprocess.Popen(
            _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)),
            **common,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not file.is_file() or not file.read_text().strip():
            assert procs[0].poll() is None and time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.1)
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    _dask(
                        "worker",
                        "--scheduler-file",
                        str(file),
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--name",
                        f"w{i}",
                        "--local-directory",
                        str(tmp_path / f"w{i}"),
                    ),
                    **common,
                )
            )
        address = json.loads(file.read_text())["address"]
        with distributed.Client(address, set_as_default=False, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, project
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=15)


def test_cli_on_a_shell_started_cluster_matches_local(cluster, capsys):
    address, project = cluster
    project.config()
    project.write("shop_audits.py", laplace_module(samples=2000))
    argv = ["audit", "--json", "--junit-xml", "junit.xml"]
    assert main(argv + ["--out", "local"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(argv + ["--out", "dask", "--executor", f"dask://{address[len('tcp://') :]}"]) == 0
    on_dask = json.loads(capsys.readouterr().out)
    assert on_dask["entries"] == local["entries"]  # seeded chunks: bit-identical wherever they run
    with distributed.Client(address, set_as_default=False) as client:  # the chunks ran on the cluster
        assert client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
        assert len(client.scheduler_info()["workers"]) == 2
