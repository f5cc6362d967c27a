"""Suite-wide settings: hypothesis examples have no deadline (a loaded CI machine is not a failing property)."""

from hypothesis import settings

settings.register_profile("dpaudit", deadline=None)
settings.load_profile("dpaudit")
