"""The mcp room: MCP servers as the window shows them.

Holds the window's MCP side (servers started after the first paint, the project trust banner, the
failure banner) and the status texts of servers. The ``McpHub`` service itself is shared plumbing
(``desktop.ui.mcp_hub``): ``AppContext`` builds it; the cards' MCP details are in ``transcript``.

May import ``markdown`` and the shared plumbing only. Nothing is re-exported here.
"""
