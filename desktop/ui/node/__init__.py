"""The node room: one chat node and its parts.

Holds the chat node widget and what it is made of: the header (title, chips, pickers), the input box,
the model choice, the node's style sheet, its Tools menu, its versions (edit, regenerate, fork) and
what it loads after the window's first paint.

May import ``transcript``, ``money``, ``mcp``, ``markdown`` and the shared plumbing; never ``window``
or ``settings``. The node room is on the start-up path (a node accepts input before the rest loads), so
the transcript is imported only when a node builds it. Nothing is re-exported here.
"""
