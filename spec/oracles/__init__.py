"""Independent judges written from the seeds' text and tables (issue 9 rule 2)."""
