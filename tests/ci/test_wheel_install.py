"""dpaudit as another project gets it: the wheel built from this checkout, in a fresh venv outside it.

The wheel (`pip wheel --no-deps`) is installed by the example workflow's own install step, with
`DPAUDIT` pointing at the wheel instead of the git URL it ships with; its dependencies come from the
package index or pip's cache, without the [testing] extra (no hypothesis), plus pytest. From a copy of
examples/ci/shop the installed console script lists and runs the audits (the workflow's audit step)
and the pre-commit hook's `entry` runs; pytest loads dpaudit's plugin there and its `assert_dp` works, and
`import dpaudit.testing.strategies` says to install the [testing] extra (hypothesis).

Slow (the wheel, the venv and its install take minutes, mostly downloads): the venv is made once per
run, shared by the pytest-xdist workers under a file lock. The tests skip only when pip can reach no
package index and has nothing cached (tried, not guessed).
"""

import fcntl
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import traceback
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass

import pytest

import dpaudit

yaml = pytest.importorskip("yaml")
from packaging.requirements import Requirement  # noqa: E402  (pytest depends on packaging)

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ci" / "shop"
WORKFLOW = EXAMPLE / ".github" / "workflows" / "dpaudit.yml"
PRE_COMMIT = EXAMPLE / ".pre-commit-config.yaml"
SHOP_ENTRIES = {
    "shop.basket-sum": "consistent",
    "shop.buyers-count": "consistent",
    "shop.buyers-count-bug": "violation",
}
INSTALL_TIMEOUT = 1800


@dataclass(frozen=True)
class Installed:
    venv: pathlib.Path
    wheel: pathlib.Path
    sources: frozenset[str]  # the files of the package folders when the wheel was built
    seconds: float

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def env(self, **extra: str) -> dict[str, str]:
        return _env(self.venv, **extra)


def _env(venv: pathlib.Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without what would reach back into the checkout or this pytest run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV") and not k.startswith("PYTEST_")
    }
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if venv is not None:
        env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    env.update(extra)
    return env


def _run(cmd, cwd, env, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _bash(script: str, cwd, env, timeout=600) -> subprocess.CompletedProcess:
    # as GitHub Actions runs a step's `run:` on Linux
    return _run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd, env, timeout)


def _tail(res: subprocess.CompletedProcess, lines: int = 40) -> str:
    return "\n".join((res.stdout + res.stderr).splitlines()[-lines:])


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _step(predicate) -> dict:
    (step,) = [s for s in _workflow()["jobs"]["audit"]["steps"] if predicate(s)]
    return step


def _hook() -> dict:
    (hook,) = yaml.safe_load(PRE_COMMIT.read_text())["repos"][0]["hooks"]
    return hook


def _pip_unreachable(root: pathlib.Path) -> bool:
    """Whether pip gets nothing from any index nor its cache (tried: setuptools, which the build needs)."""
    probe = _run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", root / "probe", "setuptools>=77"],
        root,
        _env(),
        timeout=600,
    )
    return probe.returncode != 0


def _failed(what: str, res: subprocess.CompletedProcess, root: pathlib.Path) -> dict:
    if _pip_unreachable(root):
        return {
            "skip": f"pip can reach no package index and has no cached copy of what {what} needs "
            f"(pip download setuptools failed too); last lines:\n{_tail(res, 5)}"
        }
    return {"error": f"{what} failed (exit {res.returncode}):\n{_tail(res)}"}


def _package_files() -> set[str]:
    """The wheel paths of every file in the package folders (package-dir maps mechanisms/ to dpaudit/mechanisms/, ...)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    files = set()
    for package in setuptools["packages"]:
        top = max((k for k in setuptools["package-dir"] if package == k or package.startswith(k + ".")), key=len)
        folder = ROOT / setuptools["package-dir"][top] / pathlib.Path(*package[len(top) :].split(".")[1:])
        files |= {
            f"{package.replace('.', '/')}/{f.name}"
            for f in folder.iterdir()
            if f.is_file() and not f.name.startswith(".") and f.suffix not in (".pyc", ".pyo")
        }
    return files


def _make(root: pathlib.Path) -> dict:
    """Build the wheel, make the venv and install into it as the example workflow does."""
    start = time.monotonic()
    sources = _package_files()
    dist = root / "dist"
    # the sdist first, then the wheel built from it: a file the sdist forgets is missing from the wheel
    res = _run([sys.executable, "-m", "build", "--sdist", "--outdir", dist, ROOT], root, _env(), INSTALL_TIMEOUT)
    if res.returncode:
        return _failed("building the sdist (python -m build --sdist)", res, root)
    (sdist,) = dist.glob("dpaudit-*.tar.gz")
    res = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", dist, sdist], root, _env(), INSTALL_TIMEOUT)
    if res.returncode:
        return _failed("building the wheel (pip wheel --no-deps)", res, root)
    (wheel,) = dist.glob("dpaudit-*.whl")
    venv = root / "venv"
    res = _run([sys.executable, "-m", "venv", venv], root, _env())
    if res.returncode:
        return {"error": f"python -m venv failed:\n{_tail(res)}"}
    # the workflow's install step, its DPAUDIT (git URL at a tag) pointing at the wheel, extras kept
    shipped = Requirement(_workflow()["env"]["DPAUDIT"])
    extras = f"[{','.join(sorted(shipped.extras))}]" if shipped.extras else ""
    install = _step(lambda s: "pip install" in s.get("run", ""))["run"]
    res = _bash(install, root, _env(venv, DPAUDIT=f"{shipped.name}{extras} @ {wheel.as_uri()}"), INSTALL_TIMEOUT)
    if res.returncode:
        return _failed(f"the workflow's install step ({install.strip()})", res, root)
    # pytest, without the [testing] extra: pytest loads dpaudit's plugin while hypothesis is missing
    res = _run([venv / "bin" / "python", "-m", "pip", "install", "pytest>=7"], root, _env(venv), INSTALL_TIMEOUT)
    if res.returncode:
        return _failed("pip install pytest", res, root)
    return {"venv": str(venv), "wheel": str(wheel), "sources": sorted(sources), "seconds": time.monotonic() - start}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by this run's workers: the venv is made once
    root = base / "wheel-install"
    assert ROOT not in root.parents, "the venv must be outside the checkout"
    with open(base / "wheel-install.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state_file = root / "state.json"
        if not state_file.exists():
            root.mkdir(exist_ok=True)
            try:
                state = _make(root)
            except Exception:  # noqa: BLE001  (recorded, so the other worker reports it instead of retrying)
                state = {"error": traceback.format_exc()}
            state_file.write_text(json.dumps(state))
        state = json.loads(state_file.read_text())
    if "skip" in state:
        pytest.skip(state["skip"])
    if "error" in state:
        pytest.fail(state["error"], pytrace=False)
    print(f"wheel built, venv made and installed in {state['seconds']:.0f} s")
    return Installed(
        pathlib.Path(state["venv"]), pathlib.Path(state["wheel"]), frozenset(state["sources"]), state["seconds"]
    )


@pytest.fixture
def shop(tmp_path) -> pathlib.Path:
    return shutil.copytree(EXAMPLE, tmp_path / "shop")


def test_wheel_holds_every_package_and_file(installed):
    """Every file of the folders mapped by package-dir (mechanisms/, algorithms/, audits/ included)."""
    version = dpaudit.__version__  # pyproject.toml reads it from there (dynamic)
    with zipfile.ZipFile(installed.wheel) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"dpaudit-{version}.dist-info/METADATA").decode()
        entry_points = whl.read(f"dpaudit-{version}.dist-info/entry_points.txt").decode()
    assert not installed.sources - names, f"missing from the wheel: {sorted(installed.sources - names)}"
    assert {n.split("/")[0] for n in names} == {"dpaudit", f"dpaudit-{version}.dist-info"}
    assert "dpaudit/py.typed" in names and f"dpaudit-{version}.dist-info/licenses/LICENSE" in names
    assert "dpaudit = dpaudit.testing.plugin" in entry_points and "dpaudit = dpaudit.cli:main" in entry_points
    assert 'Requires-Dist: hypothesis>=6.80; extra == "testing"' in meta
    assert 'Requires-Dist: pytest>=7; extra == "testing"' in meta


def test_front_door_and_budget_from_the_venv_outside_the_checkout(installed, tmp_path):
    code = "import dpaudit; print(len([getattr(dpaudit, n) for n in dpaudit.__all__]))"
    res = _run([installed.python, "-c", code], tmp_path, installed.env())
    assert res.returncode == 0 and int(res.stdout) == len(dpaudit.__all__), _tail(res)
    res = _run(
        ["dpaudit", "budget", "gaussian", "--sigma", "2", "--count", "100", "--delta", "1e-5", "--json"],
        tmp_path,
        installed.env(),
    )
    assert res.returncode == 0 and json.loads(res.stdout), _tail(res)


def test_imports_from_the_venv_outside_the_checkout(installed, tmp_path):
    code = (
        "import dpaudit, dpaudit.mechanisms, dpaudit.algorithms, dpaudit.audits; "
        "print('\\n'.join(m.__file__ for m in (dpaudit, dpaudit.mechanisms, dpaudit.algorithms, dpaudit.audits)))"
    )
    res = _run([installed.python, "-c", code], tmp_path, installed.env())
    assert res.returncode == 0, _tail(res)
    for file in res.stdout.split():
        assert pathlib.Path(file).is_relative_to(installed.venv), file


def test_example_workflow_audits_with_the_installed_wheel(installed, shop):
    listed = _run(["dpaudit", "list"], shop, installed.env())
    assert listed.returncode == 0, _tail(listed)
    assert all(name in listed.stdout for name in SHOP_ENTRIES)
    # the workflow's push / pull request audit step, with fewer runs per input (fixed seed: fixed outcome)
    audit = _step(lambda s: s.get("run", "").startswith("dpaudit audit"))["run"].strip()
    res = _bash(f"{audit} --samples 5000", shop, installed.env(), timeout=600)
    assert res.returncode == 0, _tail(res)
    report = json.loads((shop / "dpaudit-report" / "report.json").read_text())
    assert report["settings"]["catalog"] == "user" and report["settings"]["config"] == str(shop / "pyproject.toml")
    assert {e["name"]: e["claims"][0]["verdict"] for e in report["entries"]} == SHOP_ENTRIES
    suite = ET.parse(shop / "dpaudit-report" / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "0", "0")


def test_pre_commit_hook_entry_runs_with_the_installed_wheel(installed, shop):
    hook = _hook()
    assert hook["language"] == "python" and hook["pass_filenames"] is False  # pre-commit appends nothing
    (dependency,) = [Requirement(d) for d in hook["additional_dependencies"] if d.startswith("dpaudit")]
    assert dependency.url, "dpaudit is not on the package index: the hook must name where it comes from"
    entry = shlex.split(hook["entry"])
    res = _run(entry, shop, installed.env(), timeout=900)  # each entry's own sample size, as the hook runs
    assert res.returncode == 0, _tail(res)
    out = pathlib.Path(entry[entry.index("--out") + 1])
    report = json.loads((shop / out / "report.json").read_text())
    assert {e["name"]: e["claims"][0]["verdict"] for e in report["entries"]} == SHOP_ENTRIES
    assert (shop / entry[entry.index("--junit-xml") + 1]).is_file()


def test_pytest_plugin_loads_without_hypothesis(installed, tmp_path):
    env = installed.env()
    res = _run([installed.python, "-c", "import importlib.util as u; print(u.find_spec('hypothesis'))"], tmp_path, env)
    assert res.stdout.strip() == "None", "hypothesis must not come without the [testing] extra"
    res = _run([installed.python, "-m", "pytest", "--version"], tmp_path, env)
    assert res.returncode == 0, _tail(res)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    res = _run(
        [installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--dpaudit-samples", "100", "test_plain.py"],
        tmp_path,
        env,
    )
    assert res.returncode == 0 and "1 passed" in res.stdout, _tail(res)
    (tmp_path / "test_without_extra.py").write_text(
        "import numpy as np\nimport pytest\n\n"
        "def test_fixture(assert_dp):\n"
        "    assert_dp(lambda d, rng, n: d.sum() + rng.laplace(0, 1, n), np.array([0]), np.array([1]), epsilon=1.0,\n"
        "              samples=2000)\n\n"
        "def test_strategies_need_the_extra():\n"
        "    import dpaudit.testing\n"
        "    with pytest.raises(ImportError, match=r'pip install \"dpaudit\\[testing\\]\"'):\n"
        "        import dpaudit.testing.strategies\n"
    )
    res = _run(
        [installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_without_extra.py"], tmp_path, env
    )
    assert res.returncode == 0 and "2 passed" in res.stdout, _tail(res)
    res = _run([installed.python, "-c", "import dpaudit.testing.strategies"], tmp_path, env)
    last = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 1 and last.startswith("ImportError: dpaudit.testing.strategies needs hypothesis"), (
        res.stderr
    )
    assert 'pip install "dpaudit[testing]"' in last


def test_testing_extra_brings_hypothesis(installed, tmp_path):
    # resolved, not installed: the venv stays without hypothesis for the other tests
    res = _run(
        [
            installed.python,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--report",
            "-",
            f"dpaudit[testing] @ {installed.wheel.as_uri()}",
        ],
        tmp_path,
        installed.env(),
        INSTALL_TIMEOUT,
    )
    if res.returncode and _pip_unreachable(tmp_path):
        pytest.skip(f"pip can reach no package index and has no cached hypothesis:\n{_tail(res, 5)}")
    assert res.returncode == 0, _tail(res)
    names = {item["metadata"]["name"].lower() for item in json.loads(res.stdout)["install"]}
    assert "hypothesis" in names
