"""Suite-wide settings: hypothesis examples have no deadline (a loaded CI machine is not a failing property)
and are derandomized (the same examples on every run: a CI landing never depends on a fresh draw)."""

from hypothesis import settings

settings.register_profile("dpaudit", deadline=None, derandomize=True)
settings.load_profile("dpaudit")
