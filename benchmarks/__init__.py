"""Benchmarks and evaluation datasets for MemTrace (not part of the installed service)."""
