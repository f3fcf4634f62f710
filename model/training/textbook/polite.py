"""Textbook area: polite (filled in by its owner; see __init__.py for the MAKERS contract)."""

from __future__ import annotations

MAKERS: tuple = ()
