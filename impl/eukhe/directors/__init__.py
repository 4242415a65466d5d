"""The Director stack (control.md S5) and the goal progress check (S5.8) in production."""
