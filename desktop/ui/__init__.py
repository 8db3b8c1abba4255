"""The Qt user interface: main window, chat nodes, settings dialog, theme (``desktop.app`` wires them)."""
