"""The Qt user interface, in rooms by what they show (``desktop.app`` wires it).

Layer order, top to bottom: ``window`` > ``settings`` | ``search`` | ``canvas`` > ``node`` >
``transcript`` | ``money`` | ``mcp`` > ``attachments`` | ``markdown`` > the shared plumbing in this
folder (``context``, ``services``, ``bridge``, ``theme``, ``frames``, ``gc_guard``, ``lifetime``,
``banner``, ``mcp_hub``, ``demo_offer``). A room imports only what is below it, and rooms on one level
("|") never import each other (``pyproject.toml``'s import-linter contract); each room's ``__init__``
says what it holds.
"""
