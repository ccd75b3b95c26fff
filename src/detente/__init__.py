"""detente: the coordination plane for several coding agents in one Git repository."""

__version__ = "0.1.0"
__all__ = ["__version__"]
