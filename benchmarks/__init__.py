"""dpaudit's benchmarks: speed, power and coverage of the auditor and accountants, and the papers' experiments
reproduced cell by cell (not part of the test suite).  Run from the checkout: `python -m benchmarks list` names
them, `python -m benchmarks run NAME [ARGS]` runs one (benchmarks/README.md)."""
