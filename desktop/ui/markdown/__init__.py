"""The markdown room: model output (Markdown) to Qt, and the widgets that show it.

Holds the parser, the renderer (tokens to the Qt rich-text subset), code colouring, the streaming
pipeline (text in, rendered segments out), the rich-text and plain-text views and what they copy.

May import only the shared plumbing (the render tick in ``desktop.ui.frames``). ``theme.py`` is light
(no markdown-it) and may load before the first paint; the rest brings markdown-it and Pygments, so
nothing is re-exported here.
"""
