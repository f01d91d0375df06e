"""Test doubles that speak real wire formats on 127.0.0.1 (no network in tests)."""
