"""Small text helpers."""

from textkit.slugify import slugify

__all__ = ["slugify"]
