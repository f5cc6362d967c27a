"""The shop's private statistics."""
