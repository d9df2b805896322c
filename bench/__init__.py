"""Benchmarks of scs-templates (``make bench`` runs ``bench/run.py``; see docs/performance.md)."""
