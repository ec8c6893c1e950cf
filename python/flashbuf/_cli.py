"""Keyword arguments to the `flashbuf` command line, and its JSON documents back."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping

from . import _native

# Python spellings of the `compare` flags given once per component: a list given to the
# plural name becomes one flag per item (`policies=["lru", "cfdc"]` is
# `--policy lru --policy cfdc`); a string keeps the plural flag (`--policies lru,cfdc`).
_PLURAL_FLAGS = {
    "policies": "policy",
    "stores": "store",
    "devices": "device",
    "buffer_ratios": "buffer-ratio",
}


def _text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def argv(command: str, positional: Iterable[Any] = (), options: Mapping[str, Any] | None = None) -> list[str]:
    """The command line (after the program name) of `command` with `positional` values and
    `options` as keyword arguments: `buffer_pages=400` is `--buffer-pages 400`, `True` a
    bare flag, `None` and `False` leave the flag out, a list or tuple repeats it."""
    args = [command, *(_text(p) for p in positional)]
    for key, value in (options or {}).items():
        if key == "json":
            raise ValueError("json: the Python functions always read the JSON document")
        if value is None or value is False:
            continue
        many = isinstance(value, (list, tuple))
        name = _PLURAL_FLAGS.get(key, key.replace("_", "-")) if many else key.replace("_", "-")
        flag = f"--{name}"
        if value is True:
            args.append(flag)
        elif many:
            for item in value:
                args += [flag, _text(item)]
        else:
            args += [flag, _text(value)]
    return args


def document(command: str, *positional: Any, **options: Any) -> dict:
    """The JSON document `flashbuf COMMAND POSITIONAL OPTIONS --json` prints, as a
    dictionary, computed in this process (the GIL released while it runs). Errors are
    Python exceptions carrying the lab's message: `ValueError` for bad names, options and
    arguments, `FileNotFoundError` for a missing trace."""
    return json.loads(_native.document(argv(command, positional, options)))
