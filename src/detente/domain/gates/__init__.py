"""The gates: evidence, integration by compare-and-swap, deployments and patch artifacts."""
