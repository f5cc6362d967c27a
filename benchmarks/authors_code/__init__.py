"""The papers' public code run unchanged on its own instances (`run_mab`, `run_linear`), and the runs it gave
(`mab_chowdhury_zhou_2023.jsonl`, `linear_chowdhury_zhou_2022.jsonl`), the reference of the reproduce_* benchmarks."""
