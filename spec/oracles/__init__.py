"""Independent judges: the seeds' tables and rules transcribed as data, one module per area."""
