"""The random streams of an audit: a result is a function of its seed (and chunk size), and the floating-point audit
of float outputs (`float_check`) draws from streams disjoint from the algorithmic audit's.  Exact, no statistics:
the target records the seed sequence of every generator it is given.
"""

from dpaudit.audit import audit


class Recorder:
    def __init__(self):
        self.seeds = []

    def __call__(self, data, rng, size):
        seq = rng.bit_generator.seed_seq
        self.seeds.append((seq.entropy, tuple(seq.spawn_key)))
        return data + rng.laplace(0.0, 1.0, size)


def run(seed, **options):
    rec = Recorder()
    res = audit(
        rec, 1.0, 0.0, claim_epsilon=1.0, samples=2_000, seed=seed, executor="serial", progress=False, **options
    )
    return res, rec.seeds


def test_the_same_seed_gives_the_same_runs_and_another_seed_other_runs():
    first, seeds = run(5, float_check="off")
    again, seeds_again = run(5, float_check="off")
    _, seeds_other = run(6, float_check="off")
    assert seeds == seeds_again and first.epsilon_lower == again.epsilon_lower
    assert [d.count_first for d in first.directions] == [d.count_first for d in again.directions]
    assert all(entropy == 5 for entropy, _ in seeds) and all(entropy == 6 for entropy, _ in seeds_other)


def test_the_floating_point_audit_draws_streams_of_its_own():
    res, seeds = run(5, float_check="report")
    assert res.floating_point is not None
    assert len(set(seeds)) == len(seeds), "a seed sequence was drawn twice"
    algorithmic = {key for _, key in seeds if key[:1] != (2**31 + 1,)}
    floating = {key for _, key in seeds if key[:1] == (2**31 + 1,)}
    assert algorithmic and floating and not algorithmic & floating
