"""The package list in pyproject.toml matches the folders, the sub-packages import, and moved names forward.

`TOP_FOLDERS` and `module_files` (the checkout's folders and the module each file is installed as) are
shared with tests/test_layering.py, which checks the imports between those modules."""

import importlib
import pathlib
import tomllib
import warnings

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Each top-level folder of the checkout and the package it is installed as (pyproject's package-dir).
TOP_FOLDERS = {
    "dpaudit": "dpaudit",
    "mechanisms": "dpaudit.mechanisms",
    "algorithms": "dpaudit.algorithms",
    "audits": "dpaudit.audits",
}


def module_files() -> dict[str, pathlib.Path]:
    """Every module of the installed package (dotted name, a package as its `__init__`) and its file."""
    out = {}
    for top, pkg in TOP_FOLDERS.items():
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT / top).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((pkg, *parts))] = path
    return out


def test_every_package_folder_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    mapping = cfg["package-dir"]
    found = set()
    for top, pkg in TOP_FOLDERS.items():
        assert mapping[pkg] == top
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((pkg, *rel)))
    assert found == listed
    assert set(mapping) == set(TOP_FOLDERS.values())


#: Names that moved, at their old path, and the module that holds them now.
MOVED = {
    "dpaudit.audits.catalog": dict.fromkeys(
        (
            "AuditEntry",
            "Claim",
            "LazyClaims",
            "NeighbourPair",
            "PinNote",
            "RegretRun",
            "RELATIONS",
            "OBSERVABLES",
            "EXPECTS",
            "PIN_SIDES",
        ),
        "dpaudit.entries",
    ),
    "dpaudit.audits.run": {"run_entry": "dpaudit.entry_runner", "entry_seed": "dpaudit.entry_runner"},
    "dpaudit.audits.one_run": {"OneRunEntry": "dpaudit.entries", "run_one_run_entry": "dpaudit.entry_runner"},
    "dpaudit.user_audits": {"entry_seed": "dpaudit.entry_runner", "MIN_SAMPLES": "dpaudit.limits"},
    "dpaudit.audit.auditor": {"AuditOptions": "dpaudit.audit.options"},
    "dpaudit.audit.execution": {
        "OutputSpec": "dpaudit.audit.outputs",
        "normalise": "dpaudit.audit.outputs",
        "draw": "dpaudit.audit.outputs",
        "Chunk": "dpaudit.audit.chunks",
        "plan_chunks": "dpaudit.audit.chunks",
        "run_chunks": "dpaudit.audit.chunks",
        "selection_chunk": "dpaudit.audit.chunks",
        "estimation_chunk": "dpaudit.audit.chunks",
        "counts_above": "dpaudit.audit.chunks",
        "progress_bar": "dpaudit.audit.chunks",
        "CheckpointStore": "dpaudit.audit.checkpoints",
        "fingerprint_data": "dpaudit.audit.checkpoints",
        "blas_threads": "dpaudit.audit.workers",
        "worker_init": "dpaudit.audit.workers",
        "process_pool": "dpaudit.audit.workers",
        "dask_address": "dpaudit.audit.executors",
        "check_executor": "dpaudit.audit.executors",
        "open_runner": "dpaudit.audit.executors",
    },
    "dpaudit.audits.mab.entries": {
        **dict.fromkeys(
            (
                "hybrid_view_epsilon",
                "laplace_sum_tail_rate",
                "no_forgetting_llr_score",
                "laplace_difference_sf",
                "rnm_decision_epsilon",
                "ftnl_view_epsilon",
            ),
            "dpaudit.audits.mab.laplace_views",
        ),
        "BatchRelease": "dpaudit.audits.mab.targets",
    },
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_names_forward_with_a_deprecation_warning(old):
    module = importlib.import_module(old)
    for name, new in MOVED[old].items():
        with pytest.warns(DeprecationWarning, match=f"{old}.{name} moved to {new}.{name}"):
            value = getattr(module, name)
        assert value is getattr(importlib.import_module(new), name), (old, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a name that did not move is no warning, a name that never was an error
        with pytest.raises(AttributeError, match="no_such_name"):
            module.no_such_name  # noqa: B018


FAMILIES = ("mab", "linear", "glm", "conse")


def test_subpackages_import():
    for name in ("dpaudit.mechanisms", "dpaudit.algorithms", "dpaudit.audits", "dpaudit.accounting"):
        importlib.import_module(name)


def test_families_are_mirrored_in_algorithms_audits_and_tests():
    """Each algorithm family has its package, its catalog entries and its tests."""
    for family in FAMILIES:
        importlib.import_module(f"dpaudit.algorithms.{family}.registration")
        importlib.import_module(f"dpaudit.audits.{family}.entries")
        assert list((ROOT / "tests" / "algorithms" / family).glob("test_*.py")), family
    assert not list((ROOT / "algorithms").glob("register_*.py"))


def test_paper_specific_accounting_lives_with_its_algorithm_family():
    """Mechanisms stay generic: a paper's own calibration and claims are in dpaudit.algorithms.<family>."""
    import dpaudit.mechanisms as mechanisms
    import dpaudit.mechanisms.secagg as secagg
    import dpaudit.mechanisms.shuffle as shuffle
    import dpaudit.mechanisms.shuffle_gd as shuffle_gd
    import dpaudit.mechanisms.tree as tree
    import dpaudit.mechanisms.vector_sum as vector_sum

    moved = {
        "hybrid_ucb_node_scale": "mab.hybrid_ucb",
        "hybrid_ucb_tree_events": "mab.hybrid_ucb",
        "glm_tree_sigma": "glm.claims",
        "glm_tree_events": "glm.claims",
        "pgd_claimed_guarantee": "glm.claims",
        "cheu_parameters": "shuffle_claims",
        "cheu_claimed_epsilon": "shuffle_claims",
        "pvec_protocols": "shuffle_claims",
        "pamp_local_budget": "linear.claims",
        "pamp_sigma": "linear.claims",
        "skellam_paper_rdp": "mab.claims",
        "dist_cdp_paper_event": "mab.claims",
    }
    for name, module in moved.items():
        assert not any(hasattr(m, name) for m in (mechanisms, tree, shuffle_gd, vector_sum, shuffle, secagg)), name
        assert callable(getattr(importlib.import_module(f"dpaudit.algorithms.{module}"), name))
    assert not hasattr(secagg.SkellamSecAgg, "paper_rdp") and not hasattr(secagg.DiscreteGaussianSecAgg, "paper_event")
    import dpaudit.mechanisms.shuffle_sum as shuffle_sum

    assert not hasattr(shuffle_sum.ShuffleSum, "proof_event")
    assert callable(importlib.import_module("dpaudit.algorithms.mab.claims").shuffle_sum_proof_event)
