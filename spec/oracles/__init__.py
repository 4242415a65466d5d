"""Independent judges: the seeds tables and document shapes transcribed as data, never the models own predicates."""
