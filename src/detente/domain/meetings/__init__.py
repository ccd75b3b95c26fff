"""The meeting aggregate: rooms where overlapping claims settle who works on what."""
