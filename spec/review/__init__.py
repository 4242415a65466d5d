"""The law-by-law review report (build/report/): see spec.review.pages."""

from spec.review.pages import build

__all__ = ["build"]
