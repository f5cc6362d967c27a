"""The checkout's benchmarks/ as the package `benchmarks` for these tests.  It is not installed (it runs from the root
of a checkout: benchmarks/README.md), and the suite keeps the checkout off sys.path (tests/conftest.py), so the
package is loaded from its folder here; its modules then import each other as `benchmarks.…`."""

import importlib.util
import pathlib
import sys

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def _load_package() -> None:
    spec = importlib.util.spec_from_file_location(
        "benchmarks", BENCH / "__init__.py", submodule_search_locations=[str(BENCH)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchmarks"] = module
    spec.loader.exec_module(module)


if getattr(sys.modules.get("benchmarks"), "__file__", None) != str(BENCH / "__init__.py"):
    _load_package()
