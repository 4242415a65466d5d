"""Oracles: the seeds' text and tables transcribed as data, the independent judges of the laws."""
