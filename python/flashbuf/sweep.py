"""Sweeps: trace × policy × store × device × buffer size, one `replay` per cell, run on
threads in this process or as Ray tasks on a cluster, gathered into one table."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from . import _native
from ._cli import document
from ._frames import frame

#: Buffer sizes of a sweep that names none (those of `flashbuf compare`).
DEFAULT_BUFFER_RATIOS = (0.01, 0.03, 0.1)

#: The sweep's axes: options a cell sets itself, not allowed in `Sweep.options`.
AXES = ("trace", "policy", "store", "device", "buffer_pages", "buffer_ratio")


def run_cell(index: int, cell: Mapping[str, Any]) -> dict:
    """One cell of a sweep: `replay(**cell)`'s run, with the cell's number (`cell`) and
    its requested buffer ratio (`buffer_ratio`, None when sized in pages). The function
    each thread, or each Ray task, runs."""
    run = document("replay", **cell)["runs"][0]
    return {"cell": index, "buffer_ratio": cell.get("buffer_ratio"), **run}


@dataclass(frozen=True)
class Sweep:
    """A grid of replays: every trace × policy × store × device × buffer size, the
    remaining replay options (`seed`, `limit`, `page_size`, `warmup`, ...) shared through
    `options`. Components take options and grids as on the command line
    (`"cfdc:window=0.5"`); a trace of None is the bundled sample. With no size given,
    the sizes are `DEFAULT_BUFFER_RATIOS` of each trace's distinct pages.

        sweep = Sweep(policies=["lru", "cfdc"], devices=["sim:mtron"],
                      buffer_pages=[200, 800], options={"limit": 50_000})
        local = sweep.run()                      # threads, this machine
        cluster = sweep.run(cluster="auto")      # Ray tasks ("local": a new local Ray)
    """

    traces: Sequence[Optional[str]] = (None,)
    policies: Sequence[str] = ("lru",)
    stores: Sequence[str] = ("direct",)
    devices: Sequence[str] = ("memory",)
    buffer_pages: Sequence[int] = ()
    buffer_ratios: Sequence[float] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    def cells(self) -> list:
        """The replay options of every cell, in order (traces outermost, sizes
        innermost). Trace paths are made absolute, so that a task runs the same file
        wherever its working directory is (on a cluster, every node needs the file at
        that path)."""
        clash = sorted(set(self.options) & set(AXES))
        if clash:
            raise ValueError(f"options {clash} are axes of the sweep; give them as lists")
        for name in ("traces", "policies", "stores", "devices"):
            if isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name}: a non-empty list (one value per grid point)")
        sizes = [("buffer_pages", int(n)) for n in self.buffer_pages]
        sizes += [("buffer_ratio", float(r)) for r in self.buffer_ratios]
        if not sizes:
            sizes = [("buffer_ratio", r) for r in DEFAULT_BUFFER_RATIOS]
        traces = [os.path.abspath(t) if t is not None else _native.default_trace() for t in self.traces]
        grid = itertools.product(traces, self.policies, self.stores, self.devices, sizes)
        return [
            {"trace": t, "policy": p, "store": s, "device": d, key: size, **self.options}
            for t, p, s, d, (key, size) in grid
        ]

    def run(
        self,
        jobs: Optional[int] = None,
        cluster: Optional[str] = None,
        ray_init: Optional[Mapping[str, Any]] = None,
    ) -> pd.DataFrame:
        """Runs every cell and returns one row per cell, in cell order (`frame` of the
        runs, with `cell` and `buffer_ratio` first).

        Without `cluster`: `jobs` threads of this process (default: the machine's cores;
        each replay releases the GIL). With `cluster`: one Ray task per cell (`num_cpus=1`),
        on the Ray cluster at that address (`"auto"`, `"ray://head:10001"`, or `"local"`
        for a new local instance), connecting first unless Ray is already initialised;
        `ray_init`: more `ray.init` arguments (e.g. a `runtime_env`). Counts are the same
        either way; only the machine columns (`MACHINE_COLUMNS`) differ."""
        cells = self.cells()
        if cluster is None:
            workers = jobs or os.cpu_count() or 1
            with ThreadPoolExecutor(max_workers=workers) as pool:
                rows = list(pool.map(run_cell, range(len(cells)), cells))
        else:
            rows = _run_on_ray(cells, cluster, dict(ray_init or {}))
        rows.sort(key=lambda r: r["cell"])
        return frame(rows)


def _run_on_ray(cells: list, cluster: str, init: dict) -> list:
    try:
        import ray
    except ImportError as e:
        raise ImportError("a sweep on a cluster needs Ray: pip install 'ray>=2.40'") from e
    if not ray.is_initialized():
        ray.init(address=cluster, **init)
    task = ray.remote(num_cpus=1)(run_cell)
    return ray.get([task.remote(i, c) for i, c in enumerate(cells)])
