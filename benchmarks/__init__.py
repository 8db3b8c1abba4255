"""The performance suite of Chat Nodes (``make bench`` / ``python -m benchmarks``).

Each module measures one budget of docs/DESIGN.md §7 against a baseline measured in the same run and
returns :class:`~benchmarks._harness.Row` objects; :func:`run_suite` runs the selected modules and
:func:`report` renders the one results table (with the machine it ran on) as Markdown.

Modules: ``drivers`` (our drivers vs the official SDKs), ``node_stream`` (streaming Markdown-rich and
plain answers into a chat node, render-once, UI stall with 8 streaming nodes), ``interactive``
(typing latency while 8 nodes stream, scrolling a 2,000-message node), ``open_nodes`` (opening big
nodes, project RSS), ``cold_start`` (the whole app start-up process vs a bare PySide6 window's),
``cap`` (the history cap vs a naive one), ``ledger`` (a month's totals; the tally's check),
``hot_paths``, ``textflow`` and ``mcp_start`` (the costs the unit tests used to time, issue 31).
``corpus`` generates the Markdown-rich answers and their token-like deltas that the streaming and
opening rows use.
"""

from benchmarks._harness import Budget, Row, Settings, format_table
from benchmarks._suite import BENCHMARKS, machine_info, report, run_suite

__all__ = ["BENCHMARKS", "Budget", "Row", "Settings", "format_table", "machine_info", "report", "run_suite"]
