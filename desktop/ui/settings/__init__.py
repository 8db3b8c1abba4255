"""The settings room: the settings dialog and one module per tab.

Holds the dialog (``dialog.py``), the Providers tab (``providers_page.py``, its key field in
``provider_key.py``), General, Prices and MCP servers, and what the pages share (``common.py``).

Beside the window room, under it: the main window opens the dialog, the dialog never imports the
window. May import ``node``, ``transcript``, ``money``, ``mcp``, ``markdown`` and the shared plumbing
(the banner, the MCP hub). Nothing is re-exported here: import the modules.
"""
