"""Loaded first by pytest: a named deliberate break (EUKHE_BREAK) is installed before any code
under test is imported, then the Hypothesis profile is loaded (``laws`` unless
HYPOTHESIS_PROFILE or --hypothesis-profile names another, CI=true included)."""

from spec import breaks

breaks.install_from_env()

from spec import profiles  # noqa: E402  (after the break: nothing under test imported yet)

profiles.load()

pytest_plugins = ["spec.pytest_plugin"]
