"""Fixtures for the MCP tests."""

from __future__ import annotations
