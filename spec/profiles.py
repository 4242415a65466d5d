"""Hypothesis profiles: ``laws`` (the default, CI too), ``hunt`` and ``hunt-crosshair``.

``laws``: derandomized, no example database, no deadline, a bounded number of examples, so
``make laws`` gives the same verdict on every machine. ``hunt``: long and random, saving what
it finds to ``.hypothesis/examples`` so a find can be pinned as an ``@example``.
``hunt-crosshair``: the CrossHair backend, fewer examples (each costs 15-50x more); the
strategies cap their collections (``spec.strategies.CAP``) so a path stays solvable.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

LAWS = "laws"
HUNT = "hunt"
HUNT_CROSSHAIR = "hunt-crosshair"

settings.register_profile(
    LAWS,
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=300,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    HUNT,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    deadline=None,
    max_examples=20_000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    HUNT_CROSSHAIR,
    backend="crosshair",
    derandomize=False,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
    deadline=None,
    max_examples=400,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def load() -> str:
    """Load the profile named by HYPOTHESIS_PROFILE, else ``laws`` (also when CI=true, where
    Hypothesis would otherwise pick its own ``ci`` profile)."""
    name = os.environ.get("HYPOTHESIS_PROFILE", LAWS)
    settings.load_profile(name)
    return name


def active() -> str:
    return settings.get_current_profile_name()


def is_crosshair() -> bool:
    return active() == HUNT_CROSSHAIR
