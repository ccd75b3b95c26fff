"""One router module per API area; ``app.py`` includes them all."""
