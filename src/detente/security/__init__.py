"""Security-related adapters: CODEOWNERS (and, later, tokens and signatures)."""
