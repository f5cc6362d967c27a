"""The input vectors of the benchmark's pairs: DP-Sniper's evaluation (Bichsel, Steffen, Bogunovic, Vechev,
IEEE S&P 2021; eth-sri/dp-sniper, exp_default.py), i.e. StatDP's patterns (Ding et al. CCS 2018, Sec. 5.1)."""

ONES5, ONES10 = [1.0] * 5, [1.0] * 10
HALF = [1.0] * 5 + [0.0] * 5
HALF_R = [0.0] * 5 + [1.0] * 5
ABOVE_BELOW = [2.0] * 5 + [0.0] * 5
