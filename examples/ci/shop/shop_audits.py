"""The shop's privacy claims, audited by `dpaudit audit` (listed under [tool.dpaudit] in pyproject.toml)."""

import dp_accounting
import numpy as np
from shop import metrics

import dpaudit

# neighbouring visit logs: customer 0 did not buy / did buy
NOBODY_FIRST = np.array([0, 1, 1, 0, 1, 0, 0, 1, 0, 1])
BUYER_FIRST = np.array([1, 1, 1, 0, 1, 0, 0, 1, 0, 1])

dpaudit.register_audit(
    name="shop.buyers-count",
    claim_epsilon=1.0,
    d0=NOBODY_FIRST,
    d1=BUYER_FIRST,
    samples=20_000,
    description="Laplace count of buyers",
)(metrics.buyers_count)

# the buggy twin must be caught: it is listed as expected to violate its claim
dpaudit.register_audit(
    name="shop.buyers-count-bug",
    claim_epsilon=1.0,
    d0=NOBODY_FIRST,
    d1=BUYER_FIRST,
    samples=20_000,
    expect="violation",
    description="noise scaled per hundred customers",
)(metrics.buyers_count_per_hundred)


# a claim given as a DpEvent: its epsilon at delta = 1e-5 under the best accountant is the claim
@dpaudit.register_audit(
    name="shop.basket-sum",
    claim=dp_accounting.GaussianDpEvent(2.0),
    claim_delta=1e-5,
    d0=np.zeros(10),
    d1=np.r_[1.0, np.zeros(9)],
    samples=20_000,
)
def basket_sum(baskets, rng, size):
    return metrics.mean_basket(baskets, rng, size, sigma=2.0)
