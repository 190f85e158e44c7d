"""Saved versions of notebooks: kept at each save, listed and restored (issue 20, point 4)."""

from .store import Version, VersionStore

__all__ = ["Version", "VersionStore"]
