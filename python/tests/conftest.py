"""Shared fixtures: the committed real captures (tests/data) and prof-analyze.

The package is imported from the source tree (python/) unless an installed one comes first.
prof-analyze comes from $FUSELENS_PROF_ANALYZE (ctest sets it to the built one), else PATH;
tests that need it skip with a reason when it is absent.
"""

import glob
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "tests", "data")
sys.path.insert(0, os.path.dirname(HERE))


def committed_captures():
    """Every committed capture (tests/data/*.sqlite), sorted."""
    return sorted(glob.glob(os.path.join(DATA, "*.sqlite")))


def data(name):
    return os.path.join(DATA, name)


@pytest.fixture(scope="session")
def prof_analyze():
    exe = os.environ.get("FUSELENS_PROF_ANALYZE") or shutil.which("prof-analyze")
    if not exe or not os.path.isfile(exe):
        pytest.skip("prof-analyze not built (set FUSELENS_PROF_ANALYZE or put it on PATH)")
    return exe
