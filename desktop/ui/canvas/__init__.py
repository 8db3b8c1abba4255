"""The canvas: the project's chat nodes as cards on a zoomable board, forks drawn as edges (issue 30).

``board.CanvasBoard`` switches the window between the desk (the MDI area) and the canvas and keeps the
board's part of ``project.json``; ``view.CanvasView`` pans and zooms; ``card.NodeCard`` is one node,
``edge.ForkEdge`` one fork, ``minimap.Minimap`` the whole board in a corner.

Beside ``settings`` and ``search``, under the window: may import ``node`` and the rooms under it, the
shared plumbing and the core; never the window, settings or search (the window builds the board and
hands it the node area and the project controller). Nothing is re-exported here.
"""
