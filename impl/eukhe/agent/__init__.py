"""The agent of issue 28: one process per session that runs the turn loop, the tools, the
Directors and retries, and serves its clients. Built:

- ``tools``: read, write, edit, ls, glob, grep and bash in the session's working directory,
  each with the JSON schema it is offered and checked by;
- ``loop``: the turn loop (requests, tool calls, noted retries, forced calls, the Director
  stack after each final answer), modelled by bend/agent.py and tied by the loop bridge;
- ``compaction``: session compaction (S6.6), its summary placed at a run boundary;
- ``runner``: a turn of a session's agent process: its model, retries, tools, title;
- ``subagents`` and ``child``: subagents, each in a process of its own with its parent's cvar
  family under its profile (S4), started by the ``task`` tool or ``/agent NAME TASK``, within
  subagentMaxConcurrency and subagentStallMs; the report comes back as ``[Name] report``;
- ``inflight``: providerMaxInFlight across the processes of an agent dir;
- ``protocol``, ``daemon``, ``client``: the agent process and its JSON-lines protocol
  (``eukhe agent serve``).

Not yet: ``eukhe chat`` as a client of the agent.
"""
