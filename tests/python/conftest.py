"""Shared fixtures of the Python consumer tests of quiver."""

import gc
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# tests/python/run.sh runs the suite against the installed wheel (QUIVER_TEST_INSTALLED=1);
# otherwise the binding is taken from the repository's python/.
if os.environ.get("QUIVER_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import quiver  # noqa: E402


def _drop_last_failure():
    """pytest keeps the last failure in sys.last_* (for post-mortem
    debugging) until the next test's call; its traceback holds the failed
    test's locals, arrays included. Drop it, so that a failed test's arrays
    are released by its own teardown, not in the middle of the next test."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)


@pytest.fixture(autouse=True)
def no_leaked_arrays():
    """Every test must release every ArrowArray it got from quiver."""
    _drop_last_failure()
    gc.collect()
    before = quiver.live_arrays()
    yield
    _drop_last_failure()
    gc.collect()
    after = quiver.live_arrays()
    assert after == before, f"quiver_live_arrays went from {before} to {after}: arrays not released"
