"""Shared fixtures of the Python consumer tests of quiver."""

import gc
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import quiver  # noqa: E402


@pytest.fixture(autouse=True)
def no_leaked_arrays():
    """Every test must release every ArrowArray it got from quiver."""
    gc.collect()
    before = quiver.live_arrays()
    yield
    gc.collect()
    after = quiver.live_arrays()
    assert after == before, f"quiver_live_arrays went from {before} to {after}: arrays not released"
