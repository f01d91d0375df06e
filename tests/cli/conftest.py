"""Fixtures for the cli tests."""
