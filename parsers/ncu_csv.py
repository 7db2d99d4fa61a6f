"""Nsight Compute CSV exports: details, raw and summary pages, every ncu generation."""
