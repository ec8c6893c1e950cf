"""Sweeps: the grid of cells, the local run on threads, and the same table from Ray tasks
on a local Ray instance."""

import os

import pytest

import flashbuf
from flashbuf.sweep import DEFAULT_BUFFER_RATIOS

SWEEP = flashbuf.Sweep(
    policies=["lru", "cfdc"],
    stores=["direct", "log-structured"],
    devices=["sim:mtron", "memory"],
    buffer_pages=[150, 600],
    options={"limit": 10_000, "seed": 3},
)


def test_cells_are_the_grid_in_order(sample):
    cells = SWEEP.cells()
    assert len(cells) == 2 * 2 * 2 * 2
    assert cells[0] == {"trace": sample, "policy": "lru", "store": "direct", "device": "sim:mtron", "buffer_pages": 150, "limit": 10_000, "seed": 3}
    assert [c["buffer_pages"] for c in cells[:2]] == [150, 600]
    assert [c["policy"] for c in cells[::8]] == ["lru", "cfdc"]
    ratios = flashbuf.Sweep(traces=["testdata/traces/pgbench-sample.pagetrace.csv.zst"]).cells()
    assert [c["buffer_ratio"] for c in ratios] == list(DEFAULT_BUFFER_RATIOS)
    assert all(os.path.isabs(c["trace"]) for c in ratios)


def test_bad_sweeps_are_refused():
    with pytest.raises(ValueError, match="axes"):
        flashbuf.Sweep(options={"policy": "lru"}).cells()
    with pytest.raises(ValueError, match="policies"):
        flashbuf.Sweep(policies="lru").cells()
    with pytest.raises(ValueError, match="unknown policy 'lruu'"):
        flashbuf.Sweep(policies=["lruu"], buffer_pages=[10]).run(jobs=1)


def test_local_sweep_is_one_replay_per_cell():
    df = SWEEP.run(jobs=2)
    assert list(df["cell"]) == list(range(16))
    assert list(df.columns[:2]) == ["cell", "buffer_ratio"]
    assert (df["references"] == 10_000).all() and (df["verify_errors"] == 0).all()
    for i in (0, 5, 15):
        cell = SWEEP.cells()[i]
        alone = flashbuf.replay(**cell)
        for k in ("misses", "page_writes", "device_writes", "device_time_us", "erases"):
            assert df.loc[i, k] == alone[k], (i, k)


def test_ray_sweep_gives_the_local_table():
    ray = pytest.importorskip("ray", reason="Ray not installed (pip install 'ray>=2.40')")
    try:
        on_ray = SWEEP.run(cluster="local", ray_init={"num_cpus": 2, "include_dashboard": False})
        assert ray.is_initialized()
    finally:
        ray.shutdown()
    local = SWEEP.run(jobs=2)
    assert len(on_ray) == 16
    a, b = flashbuf.deterministic(local), flashbuf.deterministic(on_ray)
    assert list(a.columns) == list(b.columns)
    assert a.equals(b), a.compare(b)
