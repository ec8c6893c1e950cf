"""replay, compare, mrc, run, reproduce and list from Python: the CLI's documents as
dictionaries and DataFrames, and the lab's errors as Python exceptions."""

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

import flashbuf
from conftest import ROOT

REPLAY = {"policy": "cfdc", "device": "sim:mtron", "buffer_pages": 300, "limit": 20_000}


def _binary():
    """The `flashbuf` binary CI built (`cargo test` builds it), if any."""
    for candidate in (
        os.environ.get("FLASHBUF_BIN"),
        ROOT / "target" / "debug" / "flashbuf",
        ROOT / "target" / "release" / "flashbuf",
        shutil.which("flashbuf"),
    ):
        if candidate and os.path.isfile(candidate):
            return os.fspath(candidate)
    return None


def test_argv_spells_the_flags():
    args = flashbuf.argv(
        "compare",
        options={"policies": ["lru", "cfdc"], "buffer_pages": [10, 20], "quiet": True, "seed": None, "paranoid": False},
    )
    assert args == ["compare", "--policy", "lru", "--policy", "cfdc", "--buffer-pages", "10", "--buffer-pages", "20", "--quiet"]
    assert flashbuf.argv("replay", options={"policies": "lru,cfdc"}) == ["replay", "--policies", "lru,cfdc"]


def test_replay_counts(sample):
    r = flashbuf.replay(sample, **REPLAY)
    assert r["references"] == 20_000
    assert r["hits"] + r["misses"] == 20_000
    assert r["buffer_pages"] == 300
    assert r["verify_errors"] == 0
    assert r["miss_ratio"] == pytest.approx(r["misses"] / 20_000)
    assert r["policy"].startswith("cfdc") and r["device"].startswith("sim:mtron")
    assert r["device_time_us"] > 0


def test_replay_without_bytes_gives_the_same_figures(sample):
    bytes_run = flashbuf.replay(sample, **REPLAY)
    none_run = flashbuf.replay(sample, data="none", **REPLAY)
    assert none_run["data"] == "none" and "data" not in bytes_run
    for k in ("hits", "misses", "page_writes", "device_writes", "device_time_us", "erases"):
        assert none_run[k] == bytes_run[k], k


def test_replay_is_the_documents_run_and_repeats(sample):
    doc = flashbuf.document("replay", trace=sample, **REPLAY)
    assert list(doc) == ["runs"] and len(doc["runs"]) == 1
    again = flashbuf.replay(sample, **REPLAY)
    assert list(again) == list(doc["runs"][0])
    for k in ("hits", "misses", "page_writes", "device_writes", "device_time_us", "erases"):
        assert again[k] == doc["runs"][0][k], k


def test_replay_dict_equals_the_binarys_json(sample):
    binary = _binary()
    if binary is None:
        pytest.skip("no flashbuf binary (cargo build); the Rust test tests/document.rs covers this")
    args = flashbuf.argv("replay", options={"trace": sample, **REPLAY})
    out = subprocess.run([binary, *args, "--json"], check=True, capture_output=True, text=True)
    cli = json.loads(out.stdout)["runs"][0]
    py = flashbuf.replay(sample, **REPLAY)
    assert list(py) == list(cli)
    machine = set(flashbuf.MACHINE_FIELDS)
    assert {k: v for k, v in py.items() if k not in machine} == {k: v for k, v in cli.items() if k not in machine}


def test_errors_are_python_exceptions_with_the_labs_message(sample):
    with pytest.raises(ValueError, match=r"unknown policy 'lruu'.*cfdc"):
        flashbuf.replay(sample, policy="lruu")
    with pytest.raises(ValueError, match="--polcy"):
        flashbuf.replay(sample, polcy="lru")
    with pytest.raises(ValueError, match="--buffer-ratio"):
        flashbuf.replay(sample, buffer_ratio=1.5)
    with pytest.raises(FileNotFoundError, match="no-such-trace"):
        flashbuf.replay("no-such-trace.csv")
    with pytest.raises(ValueError, match="json"):
        flashbuf.replay(sample, json=True)


def test_threads_give_the_sequential_counts(sample):
    configs = [dict(REPLAY, policy=p) for p in ("lru", "cflru", "cfdc", "casa")]
    alone = [flashbuf.replay(sample, **c)["misses"] for c in configs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda c: flashbuf.replay(sample, **c)["misses"], configs))
    assert together == alone


def test_compare_frame(sample):
    df = flashbuf.compare(sample, policies=["lru", "cfdc"], devices=["sim:mtron"], buffer_pages=[100, 400], limit=10_000, jobs=2)
    assert len(df) == 4
    assert sorted(set(df["buffer_pages"])) == [100, 400]
    assert {p.split(":")[0] for p in df["policy"]} == {"lru", "cfdc"}
    assert (df["references"] == 10_000).all()
    assert (df["hits"] + df["misses"] == df["references"]).all()
    lru = df[df["policy"].str.startswith("lru")].sort_values("buffer_pages")
    assert lru["misses"].iloc[0] >= lru["misses"].iloc[1]
    assert any(c.startswith("policy_report.") for c in df.columns)


def test_mrc_frame(sample):
    df = flashbuf.mrc(sample, points=10, limit=20_000)
    assert df.attrs["references"] == 20_000 and df.attrs["policy"] == "lru"
    assert len(df) >= 5
    assert df["buffer_pages"].is_monotonic_increasing
    assert df["misses"].is_monotonic_decreasing
    exact = flashbuf.mrc(sample, sizes=[300], limit=20_000)
    lru = flashbuf.replay(sample, policy="lru", buffer_pages=300, limit=20_000)
    assert exact["misses"].iloc[0] == lru["misses"]


def test_run_engine_workload():
    r = flashbuf.run("tpcb:scale=1", transactions=200, buffer_pages=256, seed=7)
    assert r["transactions"] == 200
    assert r["consistency"] is True
    assert r["hits"] + r["misses"] > 0
    with pytest.raises(ValueError, match="tpcq"):
        flashbuf.run("tpcq")


def test_reproduce_nipu_on_the_samples():
    reports = flashbuf.reproduce("nipu", traces="testdata/traces", limit=2_000, quiet=True)
    assert [r["paper"] for r in reports] == ["nipu"]
    tables = flashbuf.tables(reports[0])
    assert tables and all(len(t.columns) > 0 for t in tables.values())
    v = flashbuf.verdicts(reports)
    assert len(v) == len(reports[0]["verdicts"]) > 0
    assert set(v["reproduction"]) == {"nipu"} and "direction_holds" in v.columns


def test_components_and_help():
    names = {c["name"] for c in flashbuf.components("policies")}
    assert {"lru", "cfdc", "arc", "clock-sweep"} <= names
    assert "--buffer-pages" in flashbuf.help("replay")
    with pytest.raises(ValueError, match="replay"):
        flashbuf.help("replya")


def test_the_gil_is_released_during_a_run(sample):
    """While a replay runs on another thread, this thread keeps running Python: the
    longest pause between two of its steps is far below the replay's duration (with the
    GIL held it would be the whole replay)."""
    import threading
    import time

    done = {}
    worker = threading.Thread(target=lambda: done.update(flashbuf.replay(sample, policy="cfdc", device="sim:mtron")))
    longest, last = 0.0, time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        longest, last = max(longest, now - last), now
    worker.join()
    assert done["references"] == 200_000
    assert done["wall_time_s"] > 0.2, done["wall_time_s"]
    assert longest < done["wall_time_s"] / 2, (longest, done["wall_time_s"])
