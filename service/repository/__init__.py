"""The only code that speaks Cypher. Every function takes an open session and returns models."""
