"""Chat Nodes: a desktop client for LLM providers. ``desktop.core`` is Qt-free; ``desktop.ui`` is the GUI."""

__version__ = "0.1.0"
