"""The agent of issue 28: one process per session that runs the turn loop, the tools, the
Directors, retries and compaction (DESIGN.md "The agent"). It grows in steps.

This step: the real tools (``eukhe.agent.tools``): read, write, edit, ls, glob, grep and bash in
the session's working directory, each with the JSON schema it is offered and checked by. They
are not wired into ``eukhe chat`` yet.
"""
