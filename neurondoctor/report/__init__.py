"""Reporters: the same report rendered for a terminal, as JSON, and as Markdown."""
