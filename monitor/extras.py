"""Optional extras: whether the modules an extra installs are there, without importing them,
and the one line that says which extra to install. The source kinds whose SDK is an extra (the
discovery kinds, the account event kinds) ask here, so a source configured without its SDK
fails with that line."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


def importable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (a dotted name whose parent is
    missing counts as missing)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def missing_extra(source_kind: str, requires: Iterable[str], extra: str | None) -> str | None:
    """One line saying which extra to install, when a module the kind needs is missing."""
    missing = [module for module in requires if not importable(module)]
    if not missing:
        return None
    return f"the {source_kind} source needs {', '.join(missing)}: pip install 'slamon[{extra}]'"
