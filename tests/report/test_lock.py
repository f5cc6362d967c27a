"""Two dpaudit processes writing one folder: the second stops at once (exit 2, "folder busy") instead
of leaving report.json from one run and report.html from the other."""

import subprocess
import sys

import pytest

import dpaudit.registry
from dpaudit.cli import main
from dpaudit.report import FolderBusyError, lock_folder

HOLD = (
    "import sys\n"
    "from dpaudit.report import lock_folder\n"
    "with lock_folder(sys.argv[1]):\n"
    "    print('locked', flush=True)\n"
    "    sys.stdin.read()\n"
)


@pytest.fixture
def held(tmp_path):
    """Another process holding the lock of tmp_path/out until the test ends."""
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield out
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_audit_into_a_busy_folder_exits_2_before_any_work(held, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("work started in a busy folder")

    monkeypatch.setattr(dpaudit.registry, "load_plugins", refuse)
    assert main(["audit", "dp-se.epoch-sum", "--samples", "20000", "--no-regret", "--out", str(held)]) == 2
    assert "folder busy: another dpaudit is writing" in capsys.readouterr().err
    assert not (held / "report.json").exists()


def test_report_into_a_busy_folder_exits_2(held, capsys):
    (held / "report.json").write_text('{"schema": "dpaudit.report", "schema_version": 1, "summary": {"ok": true}}')
    assert main(["report", str(held)]) == 2
    assert "folder busy" in capsys.readouterr().err
    assert not (held / "report.html").exists()


def test_lock_is_released_when_the_holder_ends(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "locked"
    with pytest.raises(FolderBusyError, match="folder busy"), lock_folder(out):
        pass
    proc.kill()  # a crashed holder leaves no stale lock: the kernel drops it with the process
    proc.wait(timeout=60)
    with lock_folder(out), pytest.raises(FolderBusyError), lock_folder(out):  # a second holder in this process
        pass
