"""The StatDP / DP-Sniper benchmark: the peers' algorithms (`mechanisms`), the input vectors of their pairs
(`inputs`), the exact privacy loss of a pair (`exact`), the finite-sample ceiling of an event-based audit
(`oracle`), the rows with the peers' published bounds (`rows`), and the benchmark itself (`table`:
`python -m benchmarks run peers`)."""
