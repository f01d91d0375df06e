"""Fixtures for the updates tests."""
