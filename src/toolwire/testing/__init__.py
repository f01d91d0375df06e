"""Fakes and helpers for testing ACP agents and clients built on toolwire."""
