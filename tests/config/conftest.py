"""Fixtures for the config tests."""
