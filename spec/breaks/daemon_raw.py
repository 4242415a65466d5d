"""Named deliberate breaks of the protocol's reading of a line that is not a request (the module
docstring of impl/eukhe/agent/protocol.py): bytes that are no UTF-8, and lone surrogate escapes in
JSON text. Each must be caught by the daemon bridge's ``raw`` scenarios after the first 300."""

from spec.breaks import Break

BREAKS = [
    Break(
        "daemon_raw_bytes_decoded_with_replacement",
        "daemon",
        "eukhe.agent.protocol",
        '            text = bytes(line).decode("utf-8")\n',
        '            text = bytes(line).decode("utf-8", "replace")\n',
        "a line that is no UTF-8 is read with replacement characters instead of refused not_utf8",
    ),
    Break(
        "daemon_raw_lone_surrogate_accepted",
        "daemon",
        "eukhe.agent.protocol",
        "    if where is not None:\n        raise ProtocolError(NOT_UTF8,",
        "    if False:\n        raise ProtocolError(NOT_UTF8,",
        "a JSON string or key holding a lone surrogate escape is taken as text instead of refused not_utf8",
    ),
]
