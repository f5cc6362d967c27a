"""Moved to `dpaudit.privacy` (core, so that core can type what algorithms declare); this name keeps
working with a DeprecationWarning."""

from dpaudit._moved import forward

__all__, __getattr__ = forward(__name__, "dpaudit.privacy")
