"""Results as pandas DataFrames."""

from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

#: Fields that measure the machine running a replay (wall clock, CPU time, peak memory),
#: not the replay itself: they differ between two runs of the same configuration.
MACHINE_FIELDS = ("cpu_time_s", "refs_per_s", "wall_time_s", "scan_time_s", "max_rss_bytes")

#: Policy report entries derived from the wall clock (flattened column names).
MACHINE_COLUMNS = MACHINE_FIELDS + ("policy_report.advisor_share_of_wall",)


def frame(runs: Iterable[Mapping]) -> pd.DataFrame:
    """One row per run, one column per field of the run's JSON (the CLI's `--json` run
    objects); nested reports are flattened (`policy_report.KEY`, `store_report.KEY`)."""
    runs = list(runs)
    if not runs:
        return pd.DataFrame()
    return pd.json_normalize(runs, sep=".")


def deterministic(df: pd.DataFrame) -> pd.DataFrame:
    """`df` without the columns that measure the machine ([`MACHINE_COLUMNS`]): what two
    runs of the same configurations must agree on."""
    return df.drop(columns=[c for c in MACHINE_COLUMNS if c in df.columns])


def tables(report: Mapping) -> dict:
    """A reproduction report's tables as DataFrames, by title (cells as printed)."""
    return {s["title"]: pd.DataFrame(s["rows"], columns=s["columns"]) for s in report["sections"]}


def verdicts(reports: Iterable[Mapping]) -> pd.DataFrame:
    """Every verdict of the reports, one row each; `reproduction` names the report."""
    rows = [{"reproduction": r["paper"], **v} for r in reports for v in r["verdicts"]]
    return pd.json_normalize(rows, sep=".") if rows else pd.DataFrame()
