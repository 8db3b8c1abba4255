"""The transcript room: a node's messages as widgets.

Holds the transcript (a scroll area of message widgets, their live rendering, the window of built
messages), the message views, an answer's body of segments, the action row, and one module per card
(thinking, tool, permission, error; the MCP details the cards show).

May import ``markdown`` and the shared plumbing; never ``node``, ``window``, ``settings``, ``money`` or
``mcp``. Heavy (it brings the Markdown renderer): kept off the start-up path, so nothing is
re-exported here.
"""
