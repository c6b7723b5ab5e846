"""Turning trace batches into rows the graph writer can MERGE."""
