"""Suite-wide settings: hypothesis examples have no deadline (a loaded CI machine is not a failing property)
and are derandomized (the same examples on every run: a CI landing never depends on a fresh draw).
Under pytest-xdist each worker gets its share of the cores' BLAS threads
(`dpaudit.audit.workers.worker_init`): tests/audit and tests/algorithms with -n 2 on 2 cores ran in
153 s instead of 199 s."""

import os

# Subprocesses the tests start (`python -m dpaudit`, `python -c ...`) from the checkout import the
# installed package, as the suite does under `python -P`: the checkout's dpaudit/ must not shadow it.
os.environ["PYTHONSAFEPATH"] = "1"

from hypothesis import settings
from threadpoolctl import threadpool_limits

from dpaudit.audit.workers import blas_threads

settings.register_profile("dpaudit", deadline=None, derandomize=True)
settings.load_profile("dpaudit")

if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    threadpool_limits(blas_threads(int(os.environ["PYTEST_XDIST_WORKER_COUNT"])), user_api="blas")
