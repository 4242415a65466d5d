"""A named deliberate break of the chat's compactor as /memory model moves it (memory.md D6): it
must be caught by the daemon bridge's ``compactor`` scenarios after the first 300."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_compactor_not_moved",
        "daemon",
        "eukhe.agent.chat",
        "        if self.compactor is not None:\n            self.compactor.client, self.compactor.thinking = client, choice.thinking",
        "        if self.compactor is not None:\n            return",
        "a second /memory model leaves the compactor on the model it started on, and says nothing",
    ),
]
