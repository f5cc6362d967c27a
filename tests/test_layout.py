"""The package list in pyproject.toml matches the folders, and the sub-packages import."""

import importlib
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    mapping = cfg["package-dir"]
    found = set()
    for top, pkg in [("dpaudit", "dpaudit"), ("mechanisms", "dpaudit.mechanisms"), ("algorithms", "dpaudit.algorithms"), ("audits", "dpaudit.audits")]:
        assert mapping[pkg] == top
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((pkg, *rel)))
    assert found == listed


FAMILIES = ("mab", "linear", "glm", "conse")


def test_subpackages_import():
    for name in ("dpaudit.mechanisms", "dpaudit.algorithms", "dpaudit.audits", "dpaudit.accounting"):
        importlib.import_module(name)


def test_families_are_mirrored_in_algorithms_audits_and_tests():
    """Each algorithm family has its package, its catalog entries and its tests (issue 13 item 2)."""
    for family in FAMILIES:
        importlib.import_module(f"dpaudit.algorithms.{family}.registration")
        importlib.import_module(f"dpaudit.audits.{family}.entries")
        assert list((ROOT / "tests" / "algorithms" / family).glob("test_*.py")), family
    assert not list((ROOT / "algorithms").glob("register_*.py"))


def test_paper_specific_accounting_lives_with_its_algorithm_family():
    """Mechanisms stay generic: a paper's own calibration and claims are in dpaudit.algorithms.<family>."""
    import dpaudit.mechanisms as mechanisms
    import dpaudit.mechanisms.shuffle_gd as shuffle_gd
    import dpaudit.mechanisms.tree as tree
    import dpaudit.mechanisms.secagg as secagg
    import dpaudit.mechanisms.shuffle as shuffle
    import dpaudit.mechanisms.vector_sum as vector_sum

    moved = {"hybrid_ucb_node_scale": "mab.hybrid_ucb", "hybrid_ucb_tree_events": "mab.hybrid_ucb",
             "glm_tree_sigma": "glm.claims", "glm_tree_events": "glm.claims", "pgd_claimed_guarantee": "glm.claims",
             "cheu_parameters": "shuffle_claims", "cheu_claimed_epsilon": "shuffle_claims",
             "pvec_protocols": "shuffle_claims", "pamp_local_budget": "linear.claims", "pamp_sigma": "linear.claims",
             "skellam_paper_rdp": "mab.claims", "dist_cdp_paper_event": "mab.claims"}
    for name, module in moved.items():
        assert not any(hasattr(m, name) for m in (mechanisms, tree, shuffle_gd, vector_sum, shuffle, secagg)), name
        assert callable(getattr(importlib.import_module(f"dpaudit.algorithms.{module}"), name))
    assert not hasattr(secagg.SkellamSecAgg, "paper_rdp") and not hasattr(secagg.DiscreteGaussianSecAgg, "paper_event")
    import dpaudit.mechanisms.shuffle_sum as shuffle_sum
    assert not hasattr(shuffle_sum.ShuffleSum, "proof_event")
    assert callable(importlib.import_module("dpaudit.algorithms.mab.claims").shuffle_sum_proof_event)
