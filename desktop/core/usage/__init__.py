"""Usage accounting: the usage ledger, monthly budgets, dashboard figures and model context windows.

Qt-free. The ledger is ``<config dir>/usage.jsonl``, one JSON line per model response (see
``_ledger``; which lines are valid: ``_record`` and ``_lines``); budgets and the dashboard are computed
from it, so nothing resets on restart, reading only the blocks they need through the index beside it
(``_index``).

Every name loads its module on first use: the settings need the budget helpers before the app's
first paint, the ledger report and the recorder are only needed later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.core.chat._lazy import lazy_getattr

if TYPE_CHECKING:
    from ._budget import (
        WARN_FRACTION,
        BudgetCheck,
        BudgetScope,
        BudgetState,
        BudgetStatus,
        app_budget_status,
        budget_block,
        budget_status,
        monthly_spend,
        parse_budget,
        project_budget_status,
        tightest_budget,
    )
    from ._capabilities import ModelCapabilities, capability_table, model_capabilities
    from ._context import (
        ContextUse,
        ModelData,
        context_table,
        context_use,
        context_window,
        load_model_data,
        model_data,
    )
    from ._ledger import (
        LEDGER_FILE,
        LedgerScan,
        Totals,
        UsageLedger,
        UsageRecord,
        append_record,
        ledger_path,
        normalize_project,
        read_records,
        record_for,
        saved_by_cache,
        totals,
    )
    from ._periods import PERIODS, Period, day_starts, local_now, month_range, period_range
    from ._recorder import RunInfo, UsageRecorder
    from ._report import (
        CSV_COLUMNS,
        GROUP_BYS,
        CsvExport,
        DailySpend,
        GroupBy,
        Ranked,
        UsageSummary,
        csv_text,
        export_csv,
        load_summary,
        summarize,
        summary_window,
        write_csv,
    )
    from ._tally import MonthlyTally

_LAZY: dict[str, str] = {
    "WARN_FRACTION": "_budget",
    "BudgetCheck": "_budget",
    "BudgetScope": "_budget",
    "BudgetState": "_budget",
    "BudgetStatus": "_budget",
    "app_budget_status": "_budget",
    "budget_block": "_budget",
    "budget_status": "_budget",
    "monthly_spend": "_budget",
    "parse_budget": "_budget",
    "project_budget_status": "_budget",
    "tightest_budget": "_budget",
    "ModelCapabilities": "_capabilities",
    "capability_table": "_capabilities",
    "model_capabilities": "_capabilities",
    "ContextUse": "_context",
    "ModelData": "_context",
    "context_table": "_context",
    "context_use": "_context",
    "context_window": "_context",
    "load_model_data": "_context",
    "model_data": "_context",
    "LEDGER_FILE": "_ledger",
    "LedgerScan": "_ledger",
    "Totals": "_ledger",
    "UsageLedger": "_ledger",
    "UsageRecord": "_ledger",
    "append_record": "_ledger",
    "ledger_path": "_ledger",
    "normalize_project": "_ledger",
    "read_records": "_ledger",
    "record_for": "_ledger",
    "saved_by_cache": "_ledger",
    "totals": "_ledger",
    "PERIODS": "_periods",
    "Period": "_periods",
    "day_starts": "_periods",
    "local_now": "_periods",
    "month_range": "_periods",
    "period_range": "_periods",
    "RunInfo": "_recorder",
    "UsageRecorder": "_recorder",
    "CSV_COLUMNS": "_report",
    "GROUP_BYS": "_report",
    "CsvExport": "_report",
    "DailySpend": "_report",
    "GroupBy": "_report",
    "Ranked": "_report",
    "UsageSummary": "_report",
    "csv_text": "_report",
    "export_csv": "_report",
    "load_summary": "_report",
    "summarize": "_report",
    "summary_window": "_report",
    "write_csv": "_report",
    "MonthlyTally": "_tally",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


__all__ = [
    "BudgetCheck",
    "BudgetScope",
    "tightest_budget",
    "MonthlyTally",
    "ContextUse",
    "context_use",
    "RunInfo",
    "UsageRecorder",
    # ledger
    "LEDGER_FILE", "UsageRecord", "LedgerScan", "Totals", "UsageLedger", "ledger_path", "normalize_project",
    "record_for", "saved_by_cache", "append_record", "read_records", "totals",
    # periods
    "Period", "PERIODS", "local_now", "period_range", "month_range", "day_starts",
    # budgets
    "BudgetState", "BudgetStatus", "WARN_FRACTION", "parse_budget", "budget_block", "budget_status",
    "monthly_spend", "app_budget_status", "project_budget_status",
    # dashboard figures and export
    "GroupBy", "GROUP_BYS", "Ranked", "DailySpend", "UsageSummary", "summarize", "load_summary",
    "summary_window",
    "CSV_COLUMNS", "CsvExport", "csv_text", "export_csv", "write_csv",
    # model data
    "ModelData", "load_model_data", "model_data", "context_window", "context_table",
    "ModelCapabilities", "model_capabilities", "capability_table",
]
