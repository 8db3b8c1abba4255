"""The performance suite of Chat Nodes (``make bench`` / ``python -m benchmarks``).

Each module measures one budget of docs/DESIGN.md §7 against a baseline measured in the same run and
returns :class:`~benchmarks._harness.Row` objects; :func:`run_suite` runs the selected modules and
:func:`report` renders the one results table (with the machine it ran on) as Markdown.

Modules: ``drivers`` (our drivers vs the official SDKs), ``node_stream`` (streaming into a chat
node, UI stall with 8 streaming nodes), ``open_nodes`` (opening big nodes, project RSS),
``cold_start`` (app start vs a bare PySide6 window), ``cap`` (the history cap vs a naive one).
"""

from benchmarks._harness import Budget, Row, Settings, format_table
from benchmarks._suite import BENCHMARKS, machine_info, report, run_suite

__all__ = ["BENCHMARKS", "Budget", "Row", "Settings", "format_table", "machine_info", "report", "run_suite"]
