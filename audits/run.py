"""Moved to `dpaudit.entry_runner` (core: the built-in entries run with the records of `dpaudit.records`);
these names keep working with a DeprecationWarning."""

from dpaudit._moved import forward

__all__, __getattr__ = forward(__name__, {"entry_seed": "dpaudit.entry_runner", "run_entry": "dpaudit.entry_runner"})
