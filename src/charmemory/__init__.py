"""charmemory: long-term memory for role-play characters."""

__version__ = "0.1.0"
