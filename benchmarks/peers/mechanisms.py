"""The algorithms of the StatDP / DP-Sniper benchmark, written from their papers and the peers' published
definitions: each `target(data, rng, size)` returns `size` runs (first axis) on the input `data`.

- report noisy max with Laplace / exponential noise (Ding, Wang, Wang, Zhang, Kifer, "Detecting Violations of
  Differential Privacy", CCS 2018, Algs. 5-8); NoisyHist1/2 (the same paper, Algs. 9-10);
- SVT1-SVT6 (Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential Privacy", PVLDB 2017,
  Algs. 1-6); the numerical SVT and prefix sums (Wang, Ding, Wang, Kifer, Zhang, "Proving Differential Privacy
  with Shadow Execution", PLDI 2019);
- RAPPOR and one-time RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014; Bloom bits by MurmurHash3 as in
  DP-Sniper's code); the truncated geometric mechanism GeoSample (Balcer, Vadhan, "Differential Privacy on
  Finite Computers", ITCS 2018, Alg. 4.8); numpy's float Laplace and Mironov's snapping mechanism (Mironov,
  "On Significance of the Least Significant Bits for Differential Privacy", CCS 2012, Sec. 5).
"""

from __future__ import annotations

import math

import numpy as np

#: The claimed epsilon of most rows (DP-Sniper's evaluation).
EPS = 0.1


def _lap(rng, scale, shape):
    return rng.laplace(0.0, scale, shape)


def noisy_max(noise: str, value: bool, eps: float = EPS):
    """Report noisy max (Ding et al. CCS 2018, Algs. 5-8): argmax (correct) or max value (incorrect) of
    q + noise, noise Laplace(2/eps) or Exponential(2/eps)."""

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        z = _lap(rng, 2 / eps, (size, len(q))) if noise == "laplace" else rng.exponential(2 / eps, (size, len(q)))
        m = q + z
        return m.max(axis=1) if value else m.argmax(axis=1)

    return target


def _abort_after(above: np.ndarray, c: int) -> np.ndarray:
    """Per run, True at the queries answered after the c-th 'above' (the SVT aborts there)."""
    count = np.cumsum(above, axis=1)
    before = np.concatenate([np.zeros((len(above), 1), dtype=count.dtype), count[:, :-1]], axis=1)
    return before >= c


def svt(variant: int, c: int = 1, t: float = 1.0, eps: float = EPS):
    """SVT variants 1-6 of Lyu, Su, Li (PVLDB 2017), Algs. 1-6 (DP-Sniper's encodings).

    1, 2, 4: 1 above / 0 below / -1 aborted; 3: the noisy query value when above, -1000 below, -2000
    aborted; 5, 6: 1 / 0 for every query, no abort.  Noise scales: 1: rho 1/eps1, nu 2c/eps2; 2: rho
    c/eps1 redrawn after each 'above', nu 2c/eps2; 3: rho 1/eps1, nu c/eps2; 4: eps1 = eps/4, rho 1/eps1,
    nu 1/eps2; 5: no query noise; 6: nu 1/eps2 (eps1 = eps2 = eps/2 otherwise).
    """
    eps1 = eps / 4 if variant == 4 else eps / 2
    eps2 = eps - eps1
    nu_scale = {1: 2 * c / eps2, 2: 2 * c / eps2, 3: c / eps2, 4: 1 / eps2, 5: 0.0, 6: 1 / eps2}[variant]
    rho_scale = c / eps1 if variant == 2 else 1 / eps1

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        k = len(q)
        rho = _lap(rng, rho_scale, (size, 1))
        m = q + (_lap(rng, nu_scale, (size, k)) if nu_scale > 0 else 0.0)
        if variant == 2:  # rho redrawn after every 'above'
            above = np.empty((size, k), dtype=bool)
            r = rho[:, 0].copy()
            for j in range(k):
                above[:, j] = m[:, j] >= r + t
                fresh = _lap(rng, rho_scale, size)
                r = np.where(above[:, j], fresh, r)
        else:
            above = m >= rho + t
        if variant in (5, 6):
            return above.astype(np.int64)
        aborted = _abort_after(above, c)
        if variant == 3:
            out = np.where(above, m, -1000.0)
            return np.where(aborted, -2000.0, out)
        out = above.astype(np.int64)
        return np.where(aborted, -1, out)

    return target


def numerical_svt(c: int = 2, t: float = 1.0, eps: float = EPS):
    """Numerical SVT (Wang et al. PLDI 2019): rho1 ~ Lap(3/eps), per query nu ~ Lap(6c/eps) for the test
    and an independent Lap(3c/eps) on the released value; 0 below, the value above, -1000 aborted."""

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        k = len(q)
        rho = _lap(rng, 3 / eps, (size, 1))
        above = q + _lap(rng, 6 * c / eps, (size, k)) >= t + rho
        z = q + _lap(rng, 3 * c / eps, (size, k))
        out = np.where(above, z, 0.0)
        return np.where(_abort_after(above, c), -1000.0, out)

    return target


def noisy_hist(scale: float):
    """NoisyHist1 (scale 1/eps, correct) and NoisyHist2 (scale eps, incorrect): Ding et al. CCS 2018."""

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        return q + _lap(rng, scale, (size, len(q)))

    return target


def laplace(scale: float = 1 / EPS):
    """numpy's Laplace sampler (float arithmetic; Mironov CCS 2012 on its low-order bits)."""

    def target(data, rng, size):
        return rng.laplace(float(np.asarray(data).ravel()[0]), scale, size)

    return target


def laplace_parallel(n: int = 20, eps: float = 0.005):
    """n independent Laplace(1/eps) releases of the same scalar: n*eps-DP (basic composition)."""

    def target(data, rng, size):
        return float(np.asarray(data).ravel()[0]) + _lap(rng, 1 / eps, (size, n))

    return target


def prefix_sum(eps: float = EPS):
    """Prefix sums of q + Lap(1/eps) (Wang et al. PLDI 2019)."""

    def target(data, rng, size):
        q = np.asarray(data, dtype=float)
        return np.cumsum(q + _lap(rng, 1 / eps, (size, len(q))), axis=1)

    return target


def svt34_parallel(c: int = 2, t: float = 1.0, eps: float = EPS):
    """SVT3 and SVT4 run independently on the same queries, outputs side by side (claim 2 eps)."""
    a, b = svt(3, c, t, eps), svt(4, c, t, eps)

    def target(data, rng, size):
        return np.concatenate([a(data, rng, size), b(data, rng, size).astype(float)], axis=1)

    return target


def geo_cdf(count: int, n: int, k: int) -> np.ndarray:
    """F(z), z = 0..n, of GeoSample (Balcer, Vadhan ITCS 2018, Alg. 4.8 step 2), exact integers."""
    d = (2 ** (k + 1) + 1) * (2**k + 1) ** (n - 1)
    f = []
    for z in range(n):
        if z < count:
            f.append(2 ** (k * (count - z)) * (2**k + 1) ** (n - (count - z)))
        else:
            f.append(d - 2 ** (k * (z - count + 1)) * (2**k + 1) ** (n - 1 - (z - count)))
    f.append(d)
    return np.array(f, dtype=np.int64)


def truncated_geometric(eps: float = EPS, n: int = 5):
    """GeoSample(eps, n): ln(1 + 2^-k)-DP with k = ceil(ln(2/eps)) (Balcer, Vadhan, Thm. 4.7)."""
    k = math.ceil(math.log(2.0 / eps))

    def target(data, rng, size):
        f = geo_cdf(int(np.asarray(data).ravel()[0]), n, k)
        u = rng.integers(1, int(f[-1]) + 1, size)
        return np.searchsorted(f, u, side="left").astype(np.int64)

    return target


def murmur3_32(data: bytes, seed: int) -> int:
    """MurmurHash3 x86 32-bit (Appleby), signed like mmh3.hash: the Bloom bits of DP-Sniper's RAPPOR."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    rot = lambda x, r: ((x << r) | (x >> (32 - r))) & mask  # noqa: E731
    nblocks = len(data) // 4
    for i in range(nblocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = rot((k * c1) & mask, 15) * c2 & mask
        h = (rot(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * nblocks :]
    k = 0
    for i, byte in enumerate(tail):
        k |= byte << (8 * i)
    if tail:
        h ^= rot((k * c1) & mask, 15) * c2 & mask
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - 2**32 if h >= 2**31 else h


def bloom_bits(value: int, hashes: int = 4, size: int = 20) -> np.ndarray:
    bits = np.zeros(size, dtype=bool)
    for i in range(hashes):
        bits[murmur3_32(str(value).encode(), i) % size] = True
    return bits


def rappor(f: float, p: float | None, q: float | None, hashes: int = 4, size: int = 20):
    """RAPPOR (Erlingsson et al. CCS 2014): Bloom filter, permanent randomized response with f, then
    (unless one-time) instantaneous randomized response with p, q."""

    def target(data, rng, size_):
        bits = bloom_bits(int(np.asarray(data).ravel()[0]), hashes, size)
        u = rng.random((size_, size))
        perm = np.where(u < f / 2, True, np.where(u < f, False, bits))
        if p is None:
            return perm.astype(np.int64)
        v = rng.random((size_, size))
        return (v < np.where(perm, q, p)).astype(np.int64)

    return target


def snapping(eps: float = EPS, bound: float = 100.0):
    """Mironov's snapping mechanism (CCS 2012, Sec. 5): clamp(round_Lambda(clamp(x) + S*lambda*ln U)),
    lambda = (1 + B 2^-49)/eps, Lambda the smallest power of 2 >= lambda (DP-Sniper's LaplaceFixed)."""
    lam = (1.0 + bound * 2.0**-49) / eps
    big = 2.0 ** math.ceil(math.log2(lam))

    def target(data, rng, size):
        loc = min(bound, max(-bound, float(np.asarray(data).ravel()[0])))
        sign = 1 - 2 * rng.integers(0, 2, size)
        u = rng.random(size)
        u = np.where(u == 0.0, np.nextafter(0.0, 1.0), u)
        x = loc + sign * lam * np.log(u)
        return np.clip(np.round(x / big) * big, -bound, bound)

    return target
