"""The terminal UI of eukhe (issue 29): a full-screen client of the agent of a session.

``run_tui(agent_dir, session_dir, session, project_dir)`` opens it. The modules, one job each:
``app`` (the Textual app and its keys; it reaches the agent with ``eukhe.agent.reach``),
``keys`` (binds.cfg presses, control.md S4.5), ``commands`` (the slash commands, S4, S5.7, S10),
``status`` (the status line, S9 and S10), ``transcript`` (the turn stream), ``editor`` (the
draft), ``picker`` (the model picker) and ``dictation`` (S9: recording into the draft).
"""

from eukhe.tui.app import EukheApp, run_tui

__all__ = ["EukheApp", "run_tui"]
