"""Which cases of a parametrized test run in the fast suite.

``pytest -m "not slow"`` is the suite of the edit-test loop; ``pytest -n 2`` (what CI runs) runs every case. A test
over many seeds or estimators keeps its first cases in the fast suite and marks the others slow, so the fast
suite still meets each property once and the whole suite meets it everywhere.
"""

import pytest


def fast_first(cases, n=1):
    """``cases`` with all but the first ``n`` marked slow; a tuple case is one value per argument name."""
    return [
        case if i < n else pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.slow)
        for i, case in enumerate(cases)
    ]
