"""Shared resources: counted leases with fencing, a line of waiters, and a counter."""
