"""Shared fixtures: the repository's root (the tests run its bundled sample traces)."""

import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def at_repository_root(monkeypatch):
    """Every test runs from the repository's root, as the README's commands do."""
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="session")
def sample():
    path = ROOT / "testdata" / "traces" / "tpcc-sample.pagetrace.csv.zst"
    assert path.exists(), path
    return os.fspath(path)
