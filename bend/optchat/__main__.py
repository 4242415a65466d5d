"""python -m bend.optchat FILE: print the model's transcript of a scenario file (BRIDGE_MODEL_CMD)."""

import sys

from bend import scenario
from bend.optchat.transcript import transcript

raise SystemExit(scenario.main(transcript, sys.argv[1:]))
