"""The agent of issue 28: one process per session that runs the turn loop, the tools, the
Directors and retries, and serves its clients. It grows in steps; built so far:

- ``tools``: read, write, edit, ls, glob, grep and bash in the session's working directory,
  each with the JSON schema it is offered and checked by;
- ``loop``: the turn loop (requests, tool calls, noted retries, forced calls, the Director
  stack after each final answer), modelled by bend/agent.py and tied by the loop bridge;
- ``runner``: a turn of a session's agent process: its model, retries, tools, title;
- ``inflight``: providerMaxInFlight across the processes of an agent dir;
- ``protocol``, ``daemon``, ``client``: the agent process and its JSON-lines protocol
  (``eukhe agent serve``).

Not yet: session compaction (S6.6), subagents, ``eukhe chat`` as a client of the agent.
"""
