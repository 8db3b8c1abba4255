"""The search room: find anything ever asked, in every node, version, archive and project.

Holds the search panel (``panel.SearchPanel``: the input, the filters, the results), its results
model and the delegate that paints a hit (``results``), and a node's find bar (``find_bar``: find in
one conversation). The index itself is ``desktop.core.search``; the window (``window/search_flow``)
owns the ``SearchService``, feeds it the saves and opens what the user activates.

May import the shared plumbing and the core only. Nothing is re-exported here.
"""
