"""The flashbuf lab in Python.

Each function runs the `flashbuf` command of the same name in this process (the GIL
released while it runs) and returns its `--json` document as Python data: keyword
arguments are the command's flags (`buffer_pages=400` is `--buffer-pages 400`), with the
same defaults, names and error messages; `flashbuf.help("replay")` prints them all.

    >>> import flashbuf
    >>> r = flashbuf.replay(policy="cfdc", device="sim:mtron", buffer_pages=400)
    >>> r["misses"], r["page_writes"]
    >>> df = flashbuf.compare(policies=["lru", "cfdc"], buffer_ratios=[0.01, 0.1])

Sweeps over trace × policy × store × device × size, on threads or on a Ray cluster:
`flashbuf.Sweep`.
"""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from . import _native
from ._cli import argv, document
from ._frames import MACHINE_COLUMNS, MACHINE_FIELDS, deterministic, frame, tables, verdicts
from .sweep import Sweep, run_cell

__version__ = _native.__version__

__all__ = [
    "replay",
    "compare",
    "mrc",
    "run",
    "reproduce",
    "components",
    "document",
    "argv",
    "frame",
    "deterministic",
    "tables",
    "verdicts",
    "Sweep",
    "run_cell",
    "sample_trace",
    "MACHINE_FIELDS",
    "MACHINE_COLUMNS",
]


def replay(trace: Optional[str] = None, **options: Any) -> dict:
    """One trace through one policy × store × device (`flashbuf replay`): the run's
    fields, those of the CLI's `--json` run object. `trace=None`: the bundled sample.
    Options: policy, store, device, buffer_pages or buffer_ratio, page_size, seed, limit,
    warmup, bounds, presize, format, workload, write_ratio, asymmetry, epoch, paranoid."""
    return document("replay", trace=trace, **options)["runs"][0]


def compare(trace: Optional[str] = None, **options: Any) -> pd.DataFrame:
    """Every policy × store × device × buffer size (`flashbuf compare`), one row per run.
    Lists repeat a flag: `policies=["lru", "cfdc:window=0.25..0.75/3"]`,
    `buffer_pages=[100, 400]`, `buffer_ratios=[0.01, 0.1]`; `jobs` runs at once (threads
    in Rust); `plot="x.png"` also draws the chart."""
    return frame(document("compare", trace=trace, **options)["runs"])


def mrc(trace: Optional[str] = None, **options: Any) -> pd.DataFrame:
    """LRU's miss, write-back and cost curves in one pass (`flashbuf mrc`): one row per
    buffer size; the document's other fields (references, distinct pages, sampling, ...)
    are in `df.attrs`. Options: sizes (a list), points, sample ("rate=R" or "size=N"),
    cost, page_size, limit, seed, format, plot."""
    doc = document("mrc", trace=trace, **options)
    df = pd.DataFrame(doc.pop("rows"))
    df.attrs.update(doc)
    return df


def run(workload: str, **options: Any) -> dict:
    """An engine workload (`flashbuf run`): throughput, response times, I/O and the
    workload's consistency checks, as the CLI's `--json` run object. `workload`:
    "tpcc:warehouses=1", "tpcb:scale=1", "cfdc:scan=0.1,update=0.4"; options: engine,
    threads, transactions or seconds, policy, store, device, buffer_pages, page_size,
    capacity, seed, record."""
    return document("run", workload=workload, **options)["runs"][0]


def reproduce(paper: str, **options: Any) -> list:
    """A paper's experiments (`flashbuf reproduce PAPER`): the reports (tables, notes,
    verdicts) as dictionaries; `tables(report)` and `verdicts(reports)` make DataFrames of
    them. Options: traces (directory, default "../shared/traces"), seed, limit, quiet."""
    return document("reproduce", paper, **options)["reports"]


def components(kind: Optional[str] = None) -> list:
    """Every policy, store, device, FTL and workload with its options (`flashbuf list`);
    `kind`: "policies", "stores", "devices", "ftls" or "workloads"."""
    return document("list", *([kind] if kind else []))


def help(command: str = "") -> str:  # noqa: A001 - the CLI's word
    """The `--help` text of a `flashbuf` command: every option, its default and meaning."""
    return _native.help(command)


def sample_trace() -> str:
    """The bundled sample trace (`testdata/traces/tpcc-sample.pagetrace.csv.zst`): the
    trace commands read when given none."""
    return _native.default_trace()
