"""The claim aggregate: a lease on a set of targets, its state machine and its decisions."""
