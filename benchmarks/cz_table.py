"""Chowdhury & Zhou (ICLR 2023, Sec. 7, Figs. 1-3): the authors' code's runs beside ours, cell by cell.

The table builder of `python -m benchmarks run reproduce_mab --part cz`, without simulation
(tests/benchmarks/test_cz_table.py):

- `read_authors_runs` parses `authors_code/mab_chowdhury_zhou_2023.jsonl` (one line per run of the authors' code
  written by `authors_code/run_mab.py`, or a summary line with the mean and standard error of runs 0..n-1);
- the cache `figures/mab_cz_ours.json` keeps our runs, keyed by cell (`cell_key`) and seed (`seed_key`): on each of
  the authors' instances `COPIES` runs, each with its pseudo-regret and the variance of the reward noise its
  realised regret adds; and the final regrets of the figures' runs (instances 0-19), so that a new line in the
  jsonl needs only `--part cz --from-cache` (seconds) to refresh the table;
- `compare` says whether the authors' value falls in the interval a correct implementation predicts for it.

What the authors' code reports is the realised regret sum_t (r_t[a*] - r_t[a_t]) (its `Bandit.regret`, every arm's
reward drawn each round); ours is the pseudo-regret P = sum_t Delta(a_t) on the clipped rewards' means. Their
difference M is a martingale with E[M^2] = E[sum_{a != a*} N_a (v_a + v_*)] (N_a the pulls of arm a, v the
variance of a clipped reward, `ClippedGaussianArms.reward_variances`). We model a realised regret as
P + sqrt(V) Z, V = sum_{a != a*} N_a (v_a + v_*) of the same run and Z ~ N(0, 1) independent (exact for the
unobserved optimal arm's part; it leaves out the correlation of the played arms' rewards with later eliminations).
At the figures' constants sqrt(V) is 15-60 on the easy instances 0-2, 114 on instance 3 and 185-196 on the
hard instance 0.

Intervals for the authors' value (level 95%):
- one run (the hard instance: instance 0 only): the distribution-free prediction interval
  [Y_(j), Y_(n+1-j)] of n iid realised regrets on that instance, which holds a new one with probability exactly
  (n + 1 - 2j)/(n + 1) for a continuous law (the new value's rank among the n + 1 is uniform); with n = 39, j = 1
  it is [min, max] at exactly 95%. The Z's are drawn from a fixed seed, so the table is reproducible;
- a mean of k >= 2 runs, one per instance: the 2.5% and 97.5% quantiles of the mean of one of our realised
  regrets per instance (`mean_of_one_per_instance_interval`; a plug-in law, without our own sampling error). Our
  runs on one instance take a few values (the batch at which an arm goes), so that law is skewed: the normal
  interval m +- 1.96 sqrt(sum_i (s_i^2 + V_i)/k^2 + se^2) is kept beside it (`expected_normal`) for comparison;
- the authors' own interval: Student-t over their runs (or from the mean and s.e. of a summary line).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import pathlib
import zlib
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from dpaudit._io import atomic_write_text

HERE = pathlib.Path(__file__).resolve().parent
AUTHORS_CODE = HERE / "authors_code" / "mab_chowdhury_zhou_2023.jsonl"
CACHE = HERE / "figures" / "mab_cz_ours.json"
# Our algorithm name -> the name run_mab.py writes for the authors' class (MABPrivate.py's __main__ block).
CODE_ALGS = {"DP-SE": "dpse", "Dist-DP-SE": "distdp", "Dist-RDP-SE s=10": "distrdp", "Dist-RDP-SE s=100": "distrdp100"}
HORIZONS = {"easy": 10**6, "hard": 10**7}
EPSILONS = (0.1, 0.5, 1.0)
COPIES = 39  # the smallest n whose [min, max] is a 95% prediction interval: (n - 1)/(n + 1) = 0.95
LEVEL = 0.95
MEAN_DRAWS = 3_000_000  # a k-run mean's law: exact up to this many combinations (4 instances: 39^4 = 2.3M)
CACHE_VERSION = 1
# Files whose code makes our runs: the cache records their hash and --from-cache warns when it changed.
SOURCES = (
    "algorithms/mab/elimination.py",
    "algorithms/mab/batch_se.py",
    "algorithms/mab/environment.py",
    "algorithms/mab/outcome.py",
    "mechanisms/secagg.py",
    "mechanisms/shuffle_sum.py",
)


@dataclasses.dataclass(frozen=True)
class AuthorsCell:
    """The authors' code's runs in one cell: `runs` maps run index (= instance id) -> realised regret, or, for a
    summary line (single values not kept), `summary` = {"mean", "se", "runs", "source"} and `runs` is empty."""

    instance: str
    horizon: int
    epsilon: float
    alg: str
    runs: Mapping[int, float]
    summary: Mapping[str, object] | None = None

    @property
    def ids(self) -> list[int]:
        """The authors' instances behind the cell (a summary line covers runs 0..n-1)."""
        if self.runs:
            return sorted(self.runs)
        return list(range(int(self.summary["runs"])))

    @property
    def values(self) -> np.ndarray | None:
        return np.array([self.runs[i] for i in self.ids]) if self.runs else None

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.runs else float(self.summary["mean"])

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """Student-t interval of the mean over the runs (NaN with one run), or mean +- t * se of a summary line."""
        if not self.runs:
            n = int(self.summary["runs"])
            h = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(self.summary["se"])
            return self.mean - h, self.mean + h
        x = self.values
        if x.size < 2:
            return math.nan, math.nan
        h = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * np.std(x, ddof=1) / math.sqrt(x.size))
        return self.mean - h, self.mean + h

    @property
    def source(self) -> str:
        return str(self.summary.get("source", "")) if self.summary else "benchmarks/authors_code/run_mab.py"


_REQUIRED = ("alg", "epsilon", "instance", "horizon")


def read_authors_runs(path: pathlib.Path | str | None = None) -> dict[tuple[str, int, float, str], AuthorsCell]:
    """{(instance, horizon, epsilon, alg): AuthorsCell} from the jsonl of the authors' code's runs.

    A line with "run" and "regret" is one run; a line with "mean", "se" and "runs" is a summary of runs
    0..runs-1 and is used only where no single run of the cell is stored. A later line for the same run
    replaces an earlier one (a re-run). A line that is neither raises ValueError naming the file and line."""
    path = pathlib.Path(AUTHORS_CODE if path is None else path)
    single: dict = {}
    summaries: dict = {}
    if not path.exists():
        return {}
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n}: not a JSON line ({e})") from None
        missing = [f for f in _REQUIRED if f not in r]
        if missing:
            raise ValueError(f"{path}:{n}: line lacks {', '.join(missing)}")
        if r["instance"] not in HORIZONS:
            raise ValueError(f"{path}:{n}: instance must be one of {sorted(HORIZONS)}, got {r['instance']!r}")
        key = (r["instance"], int(r["horizon"]), float(r["epsilon"]), str(r["alg"]))
        if "regret" in r and "run" in r:
            if not math.isfinite(float(r["regret"])):
                raise ValueError(f"{path}:{n}: regret must be finite, got {r['regret']!r}")
            single.setdefault(key, {})[int(r["run"])] = float(r["regret"])
        elif all(f in r for f in ("mean", "se", "runs")):
            if int(r["runs"]) < 2 or not float(r["se"]) >= 0:
                raise ValueError(
                    f"{path}:{n}: a summary line needs runs >= 2 and se >= 0, got runs={r['runs']!r}, se={r['se']!r}"
                )
            summaries[key] = {
                "mean": float(r["mean"]),
                "se": float(r["se"]),
                "runs": int(r["runs"]),
                "source": r.get("source", ""),
            }
        else:
            raise ValueError(f"{path}:{n}: a line needs run and regret (one run) or mean, se and runs (a summary)")
    out = {k: AuthorsCell(*k, runs=v) for k, v in single.items()}
    for k, s in summaries.items():
        out.setdefault(k, AuthorsCell(*k, runs={}, summary=s))
    return out


def cell_key(instance: str, horizon: int, epsilon: float, name: str) -> str:
    """The cache's key of a cell, e.g. 'hard/T=10000000/eps=1/DP-SE'."""
    return f"{instance}/T={horizon}/eps={epsilon:g}/{name}"


def run_seed(root: int, key: str, instance_id: int | None = None) -> list[int]:
    """SeedSequence entropy of a cell's runs: [root, crc32(key)] for the figures' runs (instances 0-19), and
    [root, crc32(key), 1, i] for the copies on the authors' instance i: every cell and instance has its own
    stream, whatever else is simulated (so a cached cell is re-made identically)."""
    base = [int(root), zlib.crc32(key.encode())]
    return base if instance_id is None else base + [1, int(instance_id)]


def seed_key(entropy: Sequence[int]) -> str:
    return "seed=" + "-".join(str(int(e)) for e in entropy)


def pulls_per_arm(arms: np.ndarray, lengths: np.ndarray, n_arms: int) -> np.ndarray:
    """N[i, a] = rounds run i played arm a, from the run-length encoded actions (arms[i, s] for lengths[i, s])."""
    R = arms.shape[0]
    pulls = np.zeros((R, n_arms))
    np.add.at(pulls, (np.repeat(np.arange(R), arms.shape[1]), arms.ravel()), lengths.ravel())
    return pulls


def realised_variance(pulls: np.ndarray, variances: np.ndarray, means: np.ndarray) -> np.ndarray:
    """V = sum_{a != a*} N_a (v_a + v_*) per run (pulls and variances of shape (R, K), a* = argmax of means)."""
    means = np.broadcast_to(means, pulls.shape)
    variances = np.broadcast_to(variances, pulls.shape)
    best = np.argmax(means, axis=1)
    rows = np.arange(pulls.shape[0])
    v_best = variances[rows, best]
    other = pulls.copy()
    other[rows, best] = 0.0
    return (other * (variances + v_best[:, None])).sum(axis=1)


def realised_draws(pseudo: np.ndarray, variance: np.ndarray, entropy: Sequence[int]) -> np.ndarray:
    """Realised regrets P + sqrt(V) Z with Z ~ N(0, 1) drawn from SeedSequence(entropy + [2]) (reproducible)."""
    z = np.random.default_rng(np.random.SeedSequence([*entropy, 2])).standard_normal(np.shape(pseudo))
    return np.asarray(pseudo, dtype=float) + np.sqrt(np.asarray(variance, dtype=float)) * z


def order_statistic_interval(x: np.ndarray, level: float = LEVEL) -> tuple[float, float, float]:
    """(Y_(j), Y_(n+1-j), coverage) with the largest j >= 1 such that coverage = (n + 1 - 2j)/(n + 1) >= level:
    a new draw from the law of the n iid values falls in it with probability `coverage` (continuous law: the
    new draw's rank among the n + 1 is uniform). ValueError when n < 2/(1 - level) - 1 (39 at 95%)."""
    x = np.sort(np.asarray(x, dtype=float))
    n = x.size
    j = math.floor((n + 1) * (1 - level) / 2 + 1e-9)
    if j < 1:
        raise ValueError(
            f"a distribution-free {level:.0%} prediction interval needs at least "
            f"{math.ceil(2 / (1 - level) - 1 - 1e-9)} runs, got {n}"
        )
    return float(x[j - 1]), float(x[n - j]), (n + 1 - 2 * j) / (n + 1)


def predict(
    ours: Mapping[int, Mapping[str, Sequence[float]]], ids: Sequence[int], entropy_of, level: float = LEVEL
) -> dict:
    """Our runs on the authors' instances `ids` -> our mean, its 95% interval and the interval in which the
    authors' value (one run, or the mean of one run per instance) falls for a correct implementation.

    ours[i] = {"pseudo": [...], "variance": [...]} (same number of runs on each instance); entropy_of(i) is the
    seed of instance i's runs (the realised draws of the one-run interval use it)."""
    if not ids:
        raise ValueError("ids must name at least one instance")
    missing = [i for i in ids if i not in ours]
    if missing:
        raise KeyError(missing)
    pseudo = [np.asarray(ours[i]["pseudo"], dtype=float) for i in ids]
    var = [np.asarray(ours[i]["variance"], dtype=float) for i in ids]
    n = {p.size for p in pseudo}
    if len(n) != 1 or min(n) < 2:
        raise ValueError(f"ours needs the same number (>= 2) of runs on every instance, got {sorted(n)}")
    n = n.pop()
    k = len(ids)
    per = np.stack(pseudo)  # (k, n)
    m = float(per.mean())
    se = float(math.sqrt(per.var(axis=1, ddof=1).sum() / n) / k)
    z = float(stats.norm.ppf(0.5 + level / 2))
    out = {
        "mean": m,
        "ci": [m - z * se, m + z * se],
        "runs": int(n * k),
        "copies": int(n),
        "per_instance": per.mean(axis=1).tolist(),
        "realised_noise_sd": [float(math.sqrt(v.mean())) for v in var],
    }
    y = np.stack([realised_draws(per[j], var[j], entropy_of(i)) for j, i in enumerate(ids)])  # (k, n)
    spread = float(sum(p.var(ddof=1) + v.mean() for p, v in zip(pseudo, var)) / k**2)
    h = z * math.sqrt(spread + se**2)
    out["expected_normal"] = [m - h, m + h]
    if k == 1:
        lo, hi, cov = order_statistic_interval(y[0], level)
        out |= {
            "expected": [lo, hi],
            "coverage": cov,
            "method": f"one run: order statistics of our {n} realised regrets (distribution-free, {cov:.1%})",
        }
    else:
        lo, hi = mean_of_one_per_instance_interval(y, entropy_of(ids[0]), level)
        out |= {
            "expected": [lo, hi],
            "coverage": level,
            "method": f"{k}-run mean: quantiles of the mean of one of our realised regrets per instance",
        }
    return out


def mean_of_one_per_instance_interval(
    y: np.ndarray, entropy: Sequence[int], level: float = LEVEL, draws: int = MEAN_DRAWS
) -> tuple[float, float]:
    """The (1 -+ level)/2 quantiles of the mean of k values, one drawn uniformly from each row of y (k, n): the law
    of the authors' k-run mean (one run per instance) when instance i's run follows our n realised regrets there.
    Exact over the n^k combinations when n^k <= draws, else `draws` seeded draws (SeedSequence(entropy + [3])).
    A plug-in law: per-instance regrets are a few atoms (the batch at which an arm is eliminated), so the mean's
    law is skewed and a normal interval misplaces it; the sampling error of our n runs is not added."""
    y = np.asarray(y, dtype=float)
    k, n = y.shape
    q = [(1 - level) / 2, (1 + level) / 2]
    if n**k <= draws:
        grid = np.zeros((1,))
        for row in y:
            grid = (grid[:, None] + row[None, :]).ravel()
        lo, hi = np.quantile(grid / k, q)
    else:
        rng = np.random.default_rng(np.random.SeedSequence([*entropy, 3]))
        pick = rng.integers(0, n, size=(k, draws))
        lo, hi = np.quantile(np.take_along_axis(y, pick, axis=1).mean(axis=0), q)
    return float(lo), float(hi)


def compare(
    ref: AuthorsCell, ours: Mapping[int, Mapping[str, Sequence[float]]], entropy_of, level: float = LEVEL
) -> dict:
    """The authors' cell next to our prediction: {"authors": ..., "ours": ..., "inside": bool}."""
    pred = predict(ours, ref.ids, entropy_of, level)
    lo, hi = ref.interval(level)
    inside = bool(pred["expected"][0] <= ref.mean <= pred["expected"][1])
    authors = {
        "instances": ref.ids,
        "regret": None if ref.values is None else ref.values.tolist(),
        "mean": ref.mean,
        "t_interval": [lo, hi],
        "source": ref.source,
    }
    return {"authors": authors, "ours": pred, "inside": inside}


def fmt(m: float, lo: float = math.nan, hi: float = math.nan) -> str:
    """'mean [lo, hi]', or the mean alone when the interval is undefined."""
    if math.isnan(m):
        return "-"
    return f"{m:7.0f} [{lo:6.0f}, {hi:6.0f}]" if not (math.isnan(lo) or math.isnan(hi)) else f"{m:7.0f}"


def ids_label(ids: Sequence[int]) -> str:
    """'0-3' for a contiguous range, '0' for one, '0,2' otherwise."""
    ids = sorted(ids)
    if len(ids) > 2 and ids == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}-{ids[-1]}"
    return ",".join(str(i) for i in ids)


def table_row(
    instance: str, eps: float, name: str, cmp: dict | None, figure_runs: Sequence[float] | None, known: bool
) -> tuple:
    """One row: instance, eps, algorithm, authors' code, their runs, ours on their instances, expected interval,
    inside, ours on instances 0-19 (the figures' runs). `known` = the authors' code has the algorithm."""
    fig = "-"
    if figure_runs is not None and len(figure_runs) >= 2:
        x = np.asarray(figure_runs, dtype=float)
        h = 1.96 * x.std(ddof=1) / math.sqrt(x.size)
        fig = fmt(float(x.mean()), float(x.mean() - h), float(x.mean() + h))
    if cmp is None:
        return (instance, f"{eps:g}", name, "not run" if known else "n/a", "-", "-", "-", "-", fig)
    a, o = cmp["authors"], cmp["ours"]
    return (
        instance,
        f"{eps:g}",
        name,
        fmt(a["mean"], *a["t_interval"]),
        ids_label(a["instances"]),
        f"{fmt(o['mean'], *o['ci'])} x{o['copies']}",
        f"[{o['expected'][0]:6.0f}, {o['expected'][1]:6.0f}]",
        "yes" if cmp["inside"] else "NO",
        fig,
    )


TABLE_HEADER = (
    "inst",
    "eps",
    "algorithm",
    "authors' code",
    "runs",
    "ours (their instances x n)",
    "authors' value expected in",
    "inside",
    "ours (inst. 0-19)",
)


# ---- the cache of our runs ----------------------------------------------------------------------------------------
def source_hash(root: pathlib.Path = HERE.parent) -> str:
    """sha256 over the files that make our runs (SOURCES), to tell a cache made by other code."""
    h = hashlib.sha256()
    for rel in SOURCES:
        p = root / rel
        h.update(rel.encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()[:16]


def new_cache() -> dict:
    return {
        "version": CACHE_VERSION,
        "about": "dpaudit's runs for the Chowdhury & Zhou (ICLR 2023) table of "
        "`python -m benchmarks run reproduce_mab --part cz`. on_authors_instances[cell][seed]: runs on "
        "one of the authors' instances (pseudo-regret at T and the variance V the realised regret adds); "
        "figure_runs[cell][seed]: final pseudo-regrets of the figures' runs (run r on the authors' "
        "instance r).",
        "sources": SOURCES,
        "source_hash": "",
        "on_authors_instances": {},
        "figure_runs": {},
    }


def load_cache(path: pathlib.Path | None = None) -> dict:
    """The cache (default CACHE), or an empty one when the file does not exist; ValueError for another version."""
    path = CACHE if path is None else path
    if not path.exists():
        return new_cache()
    c = json.loads(path.read_text())
    if c.get("version") != CACHE_VERSION:
        raise ValueError(f"{path}: cache version {c.get('version')!r}, this script reads {CACHE_VERSION}")
    return c


def save_cache(cache: dict, path: pathlib.Path | None = None) -> None:
    """Written atomically (dpaudit._io) to `path` (default CACHE)."""
    atomic_write_text(CACHE if path is None else path, json.dumps(cache, indent=None, separators=(",", ":")) + "\n")


def put_instance_runs(
    cache: dict,
    key: str,
    entropy: Sequence[int],
    instance_id: int,
    pseudo: np.ndarray,
    variance: np.ndarray,
    seconds: float,
) -> None:
    cache["on_authors_instances"].setdefault(key, {})[seed_key(entropy)] = {
        "instance": int(instance_id),
        "pseudo": [round(float(v), 3) for v in pseudo],
        "variance": [round(float(v), 3) for v in variance],
        "seconds": round(seconds, 1),
    }


def get_instance_runs(cache: dict, key: str, entropy: Sequence[int], copies: int = COPIES) -> dict | None:
    """The cached runs of a cell on one instance for this seed, or None (absent, or another number of copies)."""
    e = cache["on_authors_instances"].get(key, {}).get(seed_key(entropy))
    if e is None or len(e["pseudo"]) != copies:
        return None
    return e


def put_figure_runs(cache: dict, key: str, entropy: Sequence[int], finals: np.ndarray) -> None:
    cache["figure_runs"].setdefault(key, {})[seed_key(entropy)] = {"regret": [round(float(v), 3) for v in finals]}


def get_figure_runs(cache: dict, key: str, entropy: Sequence[int]) -> list[float] | None:
    e = cache["figure_runs"].get(key, {}).get(seed_key(entropy))
    return None if e is None else e["regret"]
