"""Fixtures for the client tests."""
