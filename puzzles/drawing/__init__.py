"""Shared rendering helpers for puzzle generators: canvases, emoji, text, masks."""
