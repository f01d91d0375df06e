"""Fixtures for the testing tests."""
