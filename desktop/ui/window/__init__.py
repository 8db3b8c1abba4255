"""The window room: the main window and what frames the nodes.

Holds the main window, its chrome (actions, menus, toolbar, status bar), the node area (the MDI area of
chat nodes), the project controller (open, autosave, save, export) and the error reporter.

May import every other room (``settings``, ``node``, ``transcript``, ``money``, ``mcp``, ``markdown``)
and the shared plumbing at ``desktop.ui``'s top level; nothing imports this room but ``desktop.app`` and
``desktop.screenshots``. It is the one place where rooms are wired to each other (a node's
``cost_changed`` updates the money chip). Nothing is re-exported here: import the modules.
"""
