"""Moved: `OneRunEntry` to `dpaudit.entries`, `run_one_run_entry` to `dpaudit.entry_runner`; these names
keep working with a DeprecationWarning."""

from dpaudit._moved import forward

__all__, __getattr__ = forward(
    __name__, {"OneRunEntry": "dpaudit.entries", "run_one_run_entry": "dpaudit.entry_runner"}
)
