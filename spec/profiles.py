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
FUZZ = "fuzz"  # `make fuzz`: HypoFuzz over the laws' properties (tests/hunt), the shared database
REPLAY = "replay"  # replay what the database holds, generate nothing (a find of another machine)

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


def _register_hunt_profiles() -> None:
    """The hunt's profiles use the database spec.hunt.database() names (a directory, or Redis
    for EUKHE_HUNT_DB=redis://...): registered only when asked for, so no other run needs redis."""
    from spec import hunt

    database = hunt.database()
    settings.register_profile(
        FUZZ,
        derandomize=False,
        database=database,
        deadline=None,
        max_examples=2_000,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    settings.register_profile(
        REPLAY,
        derandomize=False,
        database=database,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse],
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def load() -> str:
    """Load the profile named by HYPOTHESIS_PROFILE, else ``laws`` (also when CI=true, where
    Hypothesis would otherwise pick its own ``ci`` profile)."""
    name = os.environ.get("HYPOTHESIS_PROFILE", LAWS)
    if name in (FUZZ, REPLAY):
        _register_hunt_profiles()
    settings.load_profile(name)
    _fix_local_constants()
    return name


def _fix_local_constants() -> None:
    """Derandomized runs draw from a fixed pool of constants.

    Hypothesis (6.1xx) mixes into its draws "local constants": the literals of every local
    module in ``sys.modules`` at the time of the draw. So what a derandomized law generates
    depended on which modules the tests before it had imported (the state machine of
    session_documents_at_head ran 304 runs and 14,625 states in one run, 309 and 14,134 in
    another, 307 and 14,046 alone). Under a derandomized profile (``laws``) the local pool
    is empty, so the draws depend only on the law; the hunt profiles keep the pool (magic
    numbers of our code are good guesses there). The laws' strategies name their boundary
    values themselves (512, 513, the budgets), so nothing is lost.
    """
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    original = getattr(providers, "_get_local_constants", None)
    if original is None or getattr(original, "_eukhe_fixed", False):
        return
    empty = Constants()

    def local_constants() -> Constants:
        current = settings.default
        return empty if current is not None and current.derandomize else original()

    local_constants._eukhe_fixed = True  # type: ignore[attr-defined]
    providers._get_local_constants = local_constants
    providers.CONSTANTS_CACHE.cache.clear()


def active() -> str:
    return settings.get_current_profile_name()


def is_crosshair() -> bool:
    return active() == HUNT_CROSSHAIR
