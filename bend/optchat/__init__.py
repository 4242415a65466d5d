"""The reference model of the chat memory's pure core (memory.md, bend/optchat/ of the seed):
nodes, view, due order, push, fit, sawtooth, compaction view, work queue.

Python in the restricted style of the Bend model it stands for (DESIGN.md "Why bend/ holds
Python"): immutable values, tuples, plain loops, no I/O.
"""

from bend.optchat.transcript import transcript

__all__ = ["transcript"]
