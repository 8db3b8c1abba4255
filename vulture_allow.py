"""Vulture's allow-list: names that look unused in ``desktop/`` but are used from outside it.

Every entry is used by the tests, the benchmarks or automation (they read the app's state through
these names), or is an API a library calls. Qt's virtual methods (``eventFilter``, ``paintEvent``...)
are listed in ``[tool.vulture] ignore_names`` in pyproject.toml. Dead code does not go here: remove it.
"""

# ruff: noqa: F821, B018
# (names on ``_`` are attribute names, in vulture's whitelist format; the file is never imported)

# Read by tests and automation (state and test hooks of widgets and services).
_.probe_task  # MainWindow: the first-run local-server probe
_.export_conversation  # MainWindow: export without the file dialog
_.act_new_node  # MainWindow: its actions (the others are found by object name)
_.act_quit  # MainWindow
_.installed  # ErrorReporter
_.built  # NodeLoading: whether a node built before the first paint has its transcript yet
_.last_error  # ErrorReporter: the last summary shown
_.subscriber_count  # RuntimeBridge
_.demo_server  # AppContext: the running demo provider
_.is_loading  # UsageDialog: while the worker reads or exports the ledger
_.total_tokens  # core.chat.types.Usage
_.last_corrupt  # core.settings.SettingsStore
_.bad_lines  # core.project archive reading
_.is_expanded  # transcript.thinking
_.completer  # node.input
_.completion_visible  # node.input
_.ticks  # frames
_.is_pending  # frames
_.pending_count  # frames
_.run_due  # EventLoop: the Qt tests' fixtures close the loop after it
_.pending_timers  # EventLoop
_.index_waiting  # SearchFlow: a saved snapshot waits for the streams to end
_.trims  # gc_guard.Collector: heap trims run (the collector tests count them)
_.set_key  # settings.dialog
_.line_count  # markdown.textflow
_.set_markdown  # transcript
_.views  # transcript
_.message_texts  # transcript
_.view_for  # transcript
_.unloaded_count  # transcript
_.pending_permission_cards  # transcript
_.item_of  # window.sidebar: a node's row in the sidebar's lists
_.folders  # core.recent.RecentProjects: every project opened (the search index's list of projects)

_.revision  # ChatNodeWidget: the conversation's revision (cost cache key)
_.ordered_chips  # attachments.chips: the pending chips in order
_.is_loaded  # attachments.tiles: a thumbnail (or its placeholder) is shown

# core.mcp.CardNames: what the permission card shows beside the cleaned names (the card's wiring
# is the UI's; until then the tests read them).
_.server_given
_.tool_given
# Attachments (issue 26): the store's API for the paperclip and drag & drop (tests use it; the node's
# widgets are built on it).
_.add_file  # core.attachments.AttachmentStore

# The loopback provider's scripting and inspection API (desktop.demo), used by the tests and benchmarks
# through desktop.testing.
_.openai_base_url
_.script
_.pending_turns
_.requests
_.connection_count
_.clear_requests
_.wait_for_requests
_.fast_turn
_.midstream_error
_.drop
_.malformed
_.huge_chunk

# Core persistence API exercised by the project tests (and, for servers, the MCP approval grants).
_.kept_ids  # core.archive.TrimInfo
_.for_project  # core.permissions.GrantStore
_.allow_tool
_.allow_server
_.revoke_server
_.forget_node
_.archive_dir  # core.project.ProjectStore
_.load_or_recover
_.archive_path
_.read_archive_contents
_.full_history

# Usage dashboard figures read by its tests.
_.day_total  # core.usage DailySpend
_.bytes_read  # core.usage LedgerIndex: what a query read (tests, benchmarks/ledger_heavy.py)
_.unsaved  # core.usage UsageRecorder: records waiting for a full disk (tests; the status bar's notice)
_.series  # ui.money.usage_chart.UsageChart
_.stacks

# MCP core API used by its tests only (the UI uses the rest of it).
_.resource_links  # core.mcp.McpToolResult (listed for the model in the text already)
_.revoke  # core.mcp.TrustStore

# Markdown: markdown-it calls validateLink (every link parses; safe_link decides); tests and benchmarks
# wait on is_rendering (a stream ends when its last block is rendered).
_.validateLink
_.is_rendering

# Library APIs.
# asyncio.SubprocessProtocol callbacks (core.mcp._stdio.StdioProcess: the stdio transport).
_.connection_made
_.pipe_data_received
_.pipe_connection_lost
_.process_exited
_.pause_writing
_.resume_writing
_.priority  # keyring.backend.KeyringBackend.priority (screenshots' in-memory keyring)
_.length  # QTextLayout.FormatRange.length (markdown.textflow)
_.format  # QTextLayout.FormatRange.format (markdown.textflow)
_.paint  # QStyledItemDelegate.paint, called by Qt (window.sidebar's rows)
_.alt  # markdown-it Rule.alt: the rules a block rule may end (markdown.parser: display maths ends paragraphs)
_.__cache__  # markdown-it Ruler.__cache__: cleared so its rule chains are compiled again (markdown.parser)

# Local servers found by the probe: the context length each server reports, for the settings page and the
# context meter once the window offers the servers (tests read it now).
_.context_lengths  # core.providers.LocalServer

# Search core (issue 27): the API the search panel, find bar and Recent menu will use, exercised by
# tests/search and the search benchmark until the UI is wired.
_.prune  # core.recent.RecentProjects (File → Recent projects: forget missing folders)
_.is_complete  # core.search.SearchIndex
_.score  # core.search.SearchHit (BM25 of a "best match" hit)
_.on_active_path  # core.search.SearchHit
_.project_saved  # core.search.SearchService: after each save
_.project_closed
_.forget_project
_.rebuild
_.wait_idle
_.go_to_node  # MainWindow: the search panel's "go to node" (issue 30)
_._add_reader  # ui.event_loop.EventLoop: asyncio's selector transports call it
_._remove_reader  # ui.event_loop.EventLoop: the same
_.stall  # demo Fault.stall: the provider tests' stalled streams
