"""z3 helpers the law modules share: a proof with a time limit.

``spec.evidence.prove`` runs z3 without a limit; a law that calls ``timed`` gets z3's answer
within ``ms`` milliseconds or fails honestly ("z3 could not decide ...: unknown"), so a slow
solver on a loaded machine shows as a failure, never as a hang. The limit is z3's global
``timeout`` parameter, set for the one call and put back after it.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from spec.evidence import Evidence, prove

LIMIT_MS = 20_000


def timed(claim: z3.BoolRef, *, label: str, assumptions: Sequence[z3.BoolRef] = (), ms: int = LIMIT_MS) -> Evidence:
    """``prove`` with z3's timeout set to ``ms`` for this proof (unknown after it: the law fails)."""
    z3.set_param("timeout", ms)
    try:
        return prove(claim, label=label, assumptions=assumptions)
    finally:
        z3.set_param("timeout", 4294967295)  # z3's default: no limit
