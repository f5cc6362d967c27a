"""The report files are one set: an error or a crash at any step leaves the whole old set or a
committed new one that the next write completes, never a mixed set that passes for a whole one."""

import errno
import os
import shutil
import struct
import zlib

import pytest

import dpaudit.report.files as files
from dpaudit.report import FILES, LOCK_FILE, FolderBusyError, load_report, lock_folder, write_report
from dpaudit.report.files import check_report_set


def _no_interval(report):
    """`report` with only the known-buggy variant, whose only claim is wrong: no interval, no plot."""
    entries = [e for e in report["entries"] if e["name"] == "dist-dp-se-inverted-polya"]
    return dict(report, entries=entries, created="later")


def _set(folder):
    """The report files in `folder` (name -> bytes), and whether anything else but the lock is there."""
    present = {p.name: p.read_bytes() for p in folder.iterdir() if p.name in FILES}
    others = sorted(p.name for p in folder.iterdir() if p.name not in FILES and p.name != LOCK_FILE)
    return present, others


def _enospc_at(monkeypatch, calls):
    """os.fsync fails with ENOSPC ("disk full") at the given 1-based calls."""
    real, seen = os.fsync, []

    def fsync(fd):
        seen.append(fd)
        if len(seen) in calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def _tiny_png(text):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0\0"))
        + chunk(b"tEXt", b"Comment\0" + text.encode())
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def fast_pages(monkeypatch):
    """Cheap stand-ins for the pages and the plot (a plot only when the report has more than one entry)."""
    monkeypatch.setattr(files, "render_markdown", lambda r: f"md {r['created']}\n")
    monkeypatch.setattr(files, "render_html", lambda r: f"<html><head></head>{r['created']}</html>\n")
    monkeypatch.setattr(
        files, "interval_png", lambda entries: _tiny_png(str(len(entries))) if len(entries) > 1 else None
    )


@pytest.mark.parametrize("fail_at", [2, 3])
def test_disk_full_while_writing_keeps_the_whole_old_set(tmp_path, sample_report, monkeypatch, fail_at, fast_pages):
    write_report(sample_report, tmp_path)
    old, _ = _set(tmp_path)
    assert sorted(old) == sorted(FILES)
    _enospc_at(monkeypatch, {fail_at})
    with pytest.raises(OSError, match="No space left") as err:
        write_report(_no_interval(sample_report), tmp_path)
    assert err.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert _set(tmp_path) == (old, [])  # every old file unchanged, no staging folder left
    assert check_report_set(tmp_path) == []


def test_a_stale_interval_plot_is_removed(tmp_path, sample_report):
    write_report(sample_report, tmp_path)
    paths = write_report(_no_interval(sample_report), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.json", "report.md"]
    assert "intervals" not in paths and check_report_set(tmp_path) == []


def test_a_rendering_error_writes_nothing(tmp_path, sample_report, monkeypatch, fast_pages):
    write_report(sample_report, tmp_path)
    old, _ = _set(tmp_path)

    def broken(entries):
        raise RuntimeError("matplotlib failed")

    monkeypatch.setattr(files, "interval_png", broken)
    with pytest.raises(RuntimeError, match="matplotlib failed"):
        write_report(dict(sample_report, created="later"), tmp_path)
    assert _set(tmp_path) == (old, [])


def test_files_from_two_reports_are_not_one_set(tmp_path, sample_report, fast_pages):
    first, second = tmp_path / "first", tmp_path / "second"
    write_report(sample_report, first)
    write_report(dict(sample_report, created="later"), second)
    assert check_report_set(first) == [] and check_report_set(second) == []
    shutil.copy(second / "report.html", first / "report.html")
    shutil.copy(second / "intervals.png", first / "intervals.png")
    problems = check_report_set(first)
    assert [p.split()[0] for p in problems] == ["report.html", "intervals.png"]
    assert load_report(first)["created"] == sample_report["created"]  # report.json itself is whole
    with pytest.raises(ValueError, match=r"not one set: report.html does not belong"):
        load_report(first, whole_set=True)
    (first / "report.md").unlink()
    assert "report.md is missing" in check_report_set(first)


def test_rerendering_names_the_set_of_the_report_json_on_disk(tmp_path, sample_report, fast_pages):
    write_report(sample_report, tmp_path)
    before, _ = _set(tmp_path)
    (tmp_path / "report.md").unlink()
    paths = write_report(load_report(tmp_path), tmp_path, json_file=False)
    assert sorted(paths) == ["html", "intervals", "md"] and _set(tmp_path) == (before, [])
    with pytest.raises(ValueError, match="does not hold this report"):  # pages would not match report.json
        write_report(dict(sample_report, created="later"), tmp_path, json_file=False)
    assert _set(tmp_path) == (before, [])


def test_the_lock_file_keeps_working(tmp_path, sample_report, fast_pages):
    with lock_folder(tmp_path):
        write_report(sample_report, tmp_path)
        write_report(_no_interval(sample_report), tmp_path)
        with pytest.raises(FolderBusyError), lock_folder(tmp_path):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([LOCK_FILE, "report.html", "report.json", "report.md"])


class Crash(BaseException):
    """The process dies: this and every later file operation fail, so no clean-up runs."""


_OPS = ("fsync", "replace", "rename", "unlink", "rmdir", "write", "mkdir")


def _crash_at(monkeypatch, step):
    """Kill the writer at its `step`-th file operation (1-based); return the count of operations seen."""
    seen = [0]
    for name in _OPS:
        real = getattr(os, name)

        def op(*args, _real=real, **kwargs):
            seen[0] += 1
            if step is not None and seen[0] >= step:
                raise Crash(seen[0])
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, op)
    return seen


def test_a_crash_at_any_step_never_leaves_a_mixed_set_unnoticed(tmp_path, sample_report, monkeypatch, fast_pages):
    old_report, new_report = sample_report, _no_interval(sample_report)
    write_report(old_report, tmp_path / "old")
    write_report(new_report, tmp_path / "new")
    old, new = _set(tmp_path / "old")[0], _set(tmp_path / "new")[0]
    assert "intervals.png" in old and "intervals.png" not in new
    with monkeypatch.context() as m:  # how many file operations one write takes
        write_report(old_report, tmp_path / "count")
        steps = _crash_at(m, None)
        write_report(new_report, tmp_path / "count")
    assert steps[0] > 10
    for step in range(1, steps[0] + 1):
        folder = tmp_path / f"crash-{step}"
        write_report(old_report, folder)
        with monkeypatch.context() as m:
            _crash_at(m, step)
            with pytest.raises(Crash):
                write_report(new_report, folder)
        present, _ = _set(folder)
        problems = check_report_set(folder)
        if not problems:
            assert present in (old, new), step
        else:
            assert any("interrupted write" in p for p in problems), (step, problems)
        committed = load_report(folder)["created"] == new_report["created"]
        # what `dpaudit report DIR` does: read report.json, re-render under the lock
        with lock_folder(folder):
            write_report(load_report(folder), folder, json_file=False)
        assert check_report_set(folder) == [], step
        assert _set(folder) == ((new if committed else old), []), step
