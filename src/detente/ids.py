"""Opaque identifiers: a type prefix and 96 random bits, e.g. ``clm_4f1b0c2e9a7d3b5c6e8f0a1b``."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """A fresh random id with ``prefix`` (``clm``, ``mtg``, ``evt``, ``lse``)."""
    return f"{prefix}_{secrets.token_hex(12)}"
