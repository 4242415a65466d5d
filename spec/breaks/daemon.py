"""Deliberate breaks of the agent process's requests: each must be caught by the daemon bridge
(``EUKHE_BREAK=<name> pytest tests/bridge/test_bridge.py -k "daemon and byte"``)."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_push_cap_off_by_one",
        "daemon",
        "eukhe.directors.hooks",
        "        if pushed >= self.limits.stack_cap:\n",
        "        if pushed > self.limits.stack_cap:\n",
        "production: /remind and /force push one layer past directors.stackCap (S5.6)",
    ),
    Break(
        "daemon_model_bare_id_takes_the_first",
        "daemon",
        "eukhe.agent.daemon",
        "            if len(matches) > 1:\n",
        "            if len(matches) > 2:\n",
        "production: /model ID that names models of two providers switches to the first one instead of refusing",
    ),
]
