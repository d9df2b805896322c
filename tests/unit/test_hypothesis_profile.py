"""CI replays the same property-test examples every run (docs/testing.md, "The tiers"):
with ``CI`` set, Hypothesis loads its own ``ci`` profile, derandomized and without an
example database, so a landing is never failed by an example no earlier run tried; local
runs (``make check``, ``make property``, ``make fuzz``) draw new ones."""

from __future__ import annotations

import os

from hypothesis import settings


def test_ci_replays_the_same_examples() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None
    if os.environ.get("CI"):
        loaded = settings.default
        assert loaded is not None and loaded.derandomize, "not Hypothesis' ci profile"
        assert loaded.database is None
