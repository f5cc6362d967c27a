"""The auditor's size limits, which front ends (the CLI, `register_audit`) check before any work.

A module of its own, with no imports, so that checking a flag does not load the auditor.
"""

__all__ = ["MAX_CHUNKS", "MAX_SAMPLES", "MIN_SAMPLES"]

MIN_SAMPLES = 10
"""The fewest runs per input `dpaudit.audit.audit` accepts."""

MAX_SAMPLES = 2**50
"""The most runs per input `dpaudit.audit.audit` accepts (and the largest size `samples_needed` searches)."""

MAX_CHUNKS = 2**20
"""At most this many chunks per audit (each a task, a checkpoint file and a seed)."""
