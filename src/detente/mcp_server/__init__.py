"""MCP adapter: detente's coordination primitives as tools and resources for agents.

Importing this package is cheap; the MCP SDK is imported by :mod:`.server` and the
modules it uses. See :mod:`detente.mcp_server.server` for the tools and resources.
"""
