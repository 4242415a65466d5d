"""Oracles: judges written from the seeds' text and tables, independent of the models and production."""
