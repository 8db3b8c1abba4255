"""The Qt user interface, in rooms by what they show (``desktop.app`` wires it).

Layer order, top to bottom: ``window`` > ``settings`` > ``node`` > ``transcript`` | ``money`` | ``mcp`` >
``markdown`` > the shared plumbing in this folder (``context``, ``services``, ``bridge``, ``theme``,
``frames``, ``gc_guard``, ``banner``, ``mcp_hub``, ``demo_offer``). A room imports only what is below it
(``pyproject.toml``'s import-linter contract); each room's ``__init__`` says what it holds.
"""
