"""Usage accounting: the usage ledger, monthly budgets, dashboard figures and model context windows.

Qt-free. The ledger is ``<config dir>/usage.jsonl``, one JSON line per model response (see
``_ledger``); budgets and the dashboard are computed from it, so nothing resets on restart.
"""

from __future__ import annotations

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
    DailySpend,
    GroupBy,
    Ranked,
    UsageSummary,
    csv_text,
    export_csv,
    load_summary,
    summarize,
    summary_window,
)
from ._tally import MonthlyTally

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
    "CSV_COLUMNS", "csv_text", "export_csv",
    # model data
    "ModelData", "load_model_data", "model_data", "context_window", "context_table",
]
