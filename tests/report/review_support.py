"""What the report's made-up run holds (tests/report/conftest.py builds it): its areas, the law
that fails and its counterexample. A module of its own: every conftest is named conftest."""

AREAS = ("effort", "director")
FAILING = "effort/effort_clamp_offered"
COUNTEREXAMPLE = (
    "clamp gave 'low' for ('medium', ('off', 'low', 'high', 'xhigh'), {'reasoning': True, 'map': 'every level null'})"
)
