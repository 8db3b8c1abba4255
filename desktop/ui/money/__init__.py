"""The money room: what things cost and what the user may spend.

Holds the status bar's cost chip, a node's budget card, the project budget dialog, the usage
dashboard and its chart, and the window's money dialogs (what they need from the project is handed in).

May import ``markdown`` and the shared plumbing only. Nothing is re-exported here.
"""
