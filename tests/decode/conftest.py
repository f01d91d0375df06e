"""Fixtures for the decode tests."""
