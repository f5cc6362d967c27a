"""Moved to `dpaudit.entries` (core: one entry and claim model for the built-in and the user's entries);
these names keep working with a DeprecationWarning."""

from dpaudit._moved import forward

__all__, __getattr__ = forward(__name__, "dpaudit.entries")
