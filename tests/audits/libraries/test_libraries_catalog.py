"""The libraries catalog (`dpaudit audit --catalog libraries`): its entries, their two verdicts, the skips of the
libraries that are not installed, and its separation from the built-in catalog.

Statistical tests: each `run` is one audit at confidence 0.999, so a sound claim comes out "violation" with
probability at most 0.001 (diffprivlib's runs are seeded: its results are fixed; OpenDP draws from the
operating system's entropy).  Each verdict has its twin that must fail: a claim made too small (the
mechanism run at epsilon = 1 claimed 0.3) and a float-safe mechanism declared a known-buggy one.
"""

import dataclasses
import importlib
import json

import pytest

from dpaudit.audits.libraries import LIBRARIES, NAMES, SKIPPED, LibraryEntry
from dpaudit.audits.libraries.entry import ALGORITHMIC, FLOATING_POINT
from dpaudit.cli import main
from dpaudit.registry import AUDITS

CONFIDENCE = 0.999
SAMPLES = 10_000


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


MISSING = [lib for lib, (module, _) in LIBRARIES.items() if not _importable(module)]
INSTALLED = [lib for lib in LIBRARIES if lib not in MISSING]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _entry(name: str) -> LibraryEntry:
    entry = AUDITS.get(name)
    assert isinstance(entry, LibraryEntry)
    return entry


def _claims(record) -> dict:
    return {c["label"]: c for c in record["claims"]}


def test_a_library_not_installed_is_skipped_and_said(capsys):
    """Every library is audited or skipped, never both; the listing names each skip and its install hint."""
    assert [note.split(" ")[0] for note in SKIPPED] == MISSING
    assert {AUDITS.get(n).library for n in NAMES if isinstance(AUDITS.get(n), LibraryEntry)} == set(INSTALLED)
    code, out, _ = _run(capsys, "list", "--catalog", "libraries")
    assert code == 0
    for lib in MISSING:
        assert f"skipped {lib} (" in out and f"pip install 'dpaudit[{lib}]'" in out
    assert all(name in out for name in NAMES)


@pytest.mark.skipif(bool(INSTALLED), reason="a library is installed: the catalog has entries to audit")
def test_audit_with_no_library_installed_exits_2_saying_why(capsys, tmp_path):
    code, _, err = _run(capsys, "audit", "--catalog", "libraries", "--out", str(tmp_path / "out"))
    assert code == 2 and "nothing to audit" in err
    assert all(f"{lib} (" in err and f"pip install 'dpaudit[{lib}]'" in err for lib in MISSING)


def test_library_entries_stay_out_of_the_builtin_catalog(capsys):
    """Importing the libraries package (as this module does) leaves the built-in listing as it was."""
    code, out, _ = _run(capsys, "list", "--catalog", "builtin", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and names and not names & set(NAMES)
    assert not any(n.startswith("libraries.") for n in names)


def test_entry_checks_its_arguments():
    def build():
        raise AssertionError("not built when the arguments are wrong")

    common = dict(name="x.y", library="lib", version="1", primitive="Laplace", build=build, description="d")
    with pytest.raises(ValueError, match="fp_expect"):
        LibraryEntry(**common, float_output=True, fp_expect="maybe")
    with pytest.raises(ValueError, match="fp_expect"):
        LibraryEntry(**common, float_output=False, fp_expect="violation")
    with pytest.raises(TypeError, match="build"):
        LibraryEntry(**{**common, "build": None}, float_output=False)
    with pytest.raises(ValueError, match="name"):
        LibraryEntry(**{**common, "name": "a b"}, float_output=False)


def test_expect_is_declared_without_building_the_target():
    built = []

    def build():
        built.append(1)
        raise AssertionError("listing must not build the target")

    entry = LibraryEntry(
        name="x.y",
        library="lib",
        version="1",
        primitive="Laplace",
        build=build,
        description="d",
        float_output=True,
        fp_expect="violation",
    )
    assert entry.expect == "violation" and entry.algorithm == "lib 1" and entry.audit_calls() == 1 and not built


# --- with diffprivlib installed ----------------------------------------------------------------------------------

needs_diffprivlib = pytest.mark.skipif("diffprivlib" in MISSING, reason="diffprivlib is not installed")
needs_opendp = pytest.mark.skipif("opendp" in MISSING, reason="opendp is not installed")


@needs_diffprivlib
def test_diffprivlib_laplace_holds_algorithmically_and_leaks_through_its_bits():
    """diffprivlib's float Laplace: the stated epsilon = 1 holds for the mechanism, the floating-point audit
    contradicts it (Mironov, CCS 2012): both verdicts as declared."""
    record = _entry("libraries.diffprivlib.laplace").run(samples=SAMPLES, confidence=CONFIDENCE)
    assert record["error"] is None and record["ok"], record.get("traceback")
    claims = _claims(record)
    assert claims[ALGORITHMIC]["verdict"] == "consistent" and claims[ALGORITHMIC]["epsilon"] == 1.0
    assert claims[FLOATING_POINT]["verdict"] == "violation" and claims[FLOATING_POINT]["epsilon_lower"] > 3.0
    assert record["library"] == "diffprivlib" and record["algorithm"] == f"diffprivlib {record['version']}"
    assert [a["check"] for a in record["audits"]] == [ALGORITHMIC, FLOATING_POINT]


@needs_diffprivlib
def test_diffprivlib_snapping_holds_both_ways():
    record = _entry("libraries.diffprivlib.snapping").run(samples=SAMPLES, confidence=CONFIDENCE)
    assert record["ok"], record.get("traceback")
    assert {c["label"]: c["verdict"] for c in record["claims"]} == {
        ALGORITHMIC: "consistent",
        FLOATING_POINT: "consistent",
    }


@needs_diffprivlib
def test_twins_that_must_fail():
    """A claim too small for the mechanism (epsilon = 1 claimed 0.3) fails the algorithmic claim; snapping
    declared a known-buggy configuration fails as a missed floating-point violation."""
    laplace = _entry("libraries.diffprivlib.laplace")
    too_small = dataclasses.replace(
        laplace, name="twin.too-small", build=lambda: dataclasses.replace(laplace.build(), claim_epsilon=0.3)
    )
    record = too_small.run(samples=SAMPLES, confidence=CONFIDENCE)
    assert not record["ok"] and _claims(record)[ALGORITHMIC]["verdict"] == "violation"
    snapping = _entry("libraries.diffprivlib.snapping")
    record = dataclasses.replace(snapping, name="twin.fixed", fp_expect="violation").run(
        samples=SAMPLES, confidence=CONFIDENCE
    )
    fp = _claims(record)[FLOATING_POINT]
    assert not record["ok"] and fp["verdict"] == "consistent" and fp["expect"] == "violation"


@needs_diffprivlib
def test_a_float_output_without_a_floating_point_bound_is_an_error():
    geometric = _entry("libraries.diffprivlib.geometric")
    record = dataclasses.replace(geometric, name="twin.int", float_output=True).run(samples=2_000)
    assert not record["ok"] and "no floating-point bound" in record["error"]


@needs_diffprivlib
def test_cli_runs_named_entries_showing_library_version_and_skips(capsys, tmp_path):
    out_dir = tmp_path / "report"
    code, out, err = _run(
        capsys,
        "audit",
        "--catalog",
        "libraries",
        "libraries.diffprivlib.laplace",
        "libraries.diffprivlib.geometric",
        "--samples",
        str(SAMPLES),
        "--jobs",
        "1",
        "--no-regret",
        "--out",
        str(out_dir),
    )
    version = _entry("libraries.diffprivlib.laplace").version
    assert code == 0, out + err
    assert f"diffprivlib {version}:" in out and "floating-point" in out and "gate: PASS" in out
    for lib in MISSING:
        assert f"skipped {lib} (" in out
    report = json.loads((out_dir / "report.json").read_text())
    assert report["settings"]["catalog"] == "libraries" and report["settings"].get("skipped", []) == SKIPPED
    assert f"## diffprivlib {version}" in (out_dir / "report.md").read_text()


# --- with OpenDP installed ---------------------------------------------------------------------------------------


@needs_opendp
def test_opendp_laplace_holds_both_ways_against_its_map():
    """OpenDP's float Laplace on its grid: the map's epsilon = 1 holds for the mechanism and its floats."""
    entry = _entry("libraries.opendp.laplace")
    record = entry.run(samples=SAMPLES, confidence=CONFIDENCE)
    assert record["ok"], record.get("traceback")
    claims = _claims(record)
    assert claims[ALGORITHMIC]["epsilon"] == 1.0 and claims[ALGORITHMIC]["accountant"] == "opendp privacy map"
    assert claims[FLOATING_POINT]["verdict"] == "consistent" and record["reproducible"] is False


@needs_opendp
def test_opendp_claims_are_read_from_the_privacy_maps():
    gaussian = _entry("libraries.opendp.gaussian")
    (claim,) = [c for c in gaussian.claims if c.label == ALGORITHMIC]
    assert claim.value() == pytest.approx(gaussian.build().claim.epsilon(claim.delta)) and claim.delta == 1e-6
    assert [c.label for c in _entry("libraries.opendp.noisy-max").claims] == [ALGORITHMIC]


def test_every_installed_library_offers_the_bandit_primitives():
    """What each library has of Laplace, Gaussian, geometric, exponential mechanism / noisy max, snapping."""
    primitives = {
        lib: {AUDITS.get(n).primitive for n in NAMES if getattr(AUDITS.get(n), "library", "") == lib}
        for lib in INSTALLED
    }
    wanted = {"Laplace", "Gaussian", "geometric", "report noisy max", "exponential mechanism"}
    partial = {
        "pipelinedp": {"Laplace", "Gaussian", "exponential mechanism"},
        "pydp": {"Laplace", "Gaussian", "geometric"},
    }
    for lib, found in primitives.items():
        assert partial.get(lib, wanted) <= found, lib
    if "diffprivlib" in primitives:
        assert "snapping" in primitives["diffprivlib"]


@pytest.mark.skipif("pydp" in MISSING, reason="python-dp is not installed")
def test_google_noise_laplace_holds_in_floats_and_the_gaussian_leaks():
    """python-dp's grid-based Laplace keeps its claim in floats; its Gaussian's floats contradict it (measured
    epsilon_lower 4 to 6 against 1): both as declared, at confidence 0.999 (unseeded runs)."""
    laplace = _entry("libraries.pydp.laplace").run(samples=SAMPLES, confidence=CONFIDENCE)
    gaussian = _entry("libraries.pydp.gaussian").run(samples=SAMPLES, confidence=CONFIDENCE)
    assert laplace["ok"] and gaussian["ok"], (laplace.get("traceback"), gaussian.get("traceback"))
    assert _claims(laplace)[FLOATING_POINT]["verdict"] == "consistent"
    assert _claims(gaussian)[FLOATING_POINT]["verdict"] == "violation" and gaussian["reproducible"] is False
