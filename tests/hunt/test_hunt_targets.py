"""The laws' Hypothesis properties as @given tests, for `make fuzz` (HypoFuzz) and for replaying
a find (spec.hunt). Each law's check runs once with spec.evidence capturing: its enumerations
and proofs return at once and each property it would hunt becomes ``test_<area>__<law>__<n>``
here (a state machine's TestCase for the stateful ones).

Only under the hunt profiles (HYPOTHESIS_PROFILE=fuzz or replay): under ``laws`` these
properties already run inside `make laws`. EUKHE_HUNT_AREAS / EUKHE_HUNT_LAWS (comma lists)
narrow the targets.
"""

from __future__ import annotations

import os

import pytest

from spec import hunt, profiles

# Loaded again here: a HypoFuzz worker collects in a process forked from the hub, where the
# root conftest (and its profile) ran once already and a pytest session since may have reset it.
if profiles.load() in (profiles.FUZZ, profiles.REPLAY):
    _areas = {a for a in os.environ.get("EUKHE_HUNT_AREAS", "").split(",") if a}
    _laws = {a for a in os.environ.get("EUKHE_HUNT_LAWS", "").split(",") if a}
    for _target in hunt.targets(_areas or None, _laws or None):
        globals()[_target.name if _target.kind == "given" else _target.test.__name__] = _target.test
else:

    @pytest.mark.skip(reason="the hunt's targets exist under HYPOTHESIS_PROFILE=fuzz or replay (`make fuzz`)")
    def test_hunt_targets() -> None:
        """Under the laws profile every property runs inside its law (tests/laws)."""
