"""Texts that are no tool call in any format (see ``corpus``)."""
