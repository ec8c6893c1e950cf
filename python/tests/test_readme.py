"""The README's `## Python` section runs as written on a fresh clone: its Python blocks,
in order, in one namespace, from the repository's root."""

import re

import pytest

from conftest import ROOT


def python_blocks():
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_section_has_the_example_and_both_sweeps():
    blocks = python_blocks()
    assert len(blocks) == 2
    assert "flashbuf.replay(" in blocks[0] and "sweep.run()" in blocks[1]
    assert 'cluster="local"' in blocks[1]


def test_readme_python_blocks_run(capsys):
    pytest.importorskip("ray", reason="the README's sweep block uses Ray (pip install ray)")
    namespace = {}
    for block in python_blocks():
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["run"]["references"] == 50_000
    assert len(namespace["df"]) == 6
    assert len(namespace["local"]) == 8
    out = capsys.readouterr().out
    assert "miss ratio" in out and "direction_holds" in out
