"""Fixtures for the handoff tests."""
