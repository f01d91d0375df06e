"""Fixtures for the tools tests."""
