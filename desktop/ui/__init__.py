"""The Qt user interface: main window, chat nodes, settings dialog, theme.

Importing the package first applies :func:`desktop.ui._compat.guard_singleton_refcounts`, which
protects the interpreter from a reference-counting defect of PySide6 6.12.0 on Python 3.11.
"""

from desktop.ui._compat import guard_singleton_refcounts

guard_singleton_refcounts()
