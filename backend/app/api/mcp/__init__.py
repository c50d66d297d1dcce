"""The Model Context Protocol server for other agents.

``server`` holds the tools and resources; ``transports`` serves them over streamable HTTP at
``/mcp`` and over stdio (``rca mcp``).
"""
