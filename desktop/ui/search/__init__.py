"""The search room: find anything ever asked, in every node, version, archive and project.

Holds the search panel (``panel.SearchPanel``: the input, the filters, the results), its results
model and the delegate that paints a hit (``results``), and ``reveal.reveal_message`` (the version
holding a hit, then the node's find bar scrolls to it; find in one conversation is the node room's
``node/find_bar``). The index itself is ``desktop.core.search``; the window (``window/search_flow``)
owns the ``SearchService``, feeds it the saves and opens what the user activates.

Beside ``settings`` and ``canvas``, under the window: may import ``node`` and the rooms under it, the
shared plumbing and the core; never the window, settings or the canvas. Nothing is re-exported here.
"""
