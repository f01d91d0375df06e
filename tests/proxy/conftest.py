"""Fixtures for the proxy tests."""
