"""Fixtures for the context tests (windows, estimates, meter, overflow, compaction)."""
