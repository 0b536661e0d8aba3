"""The YAML config: models and loading.

The names below load on first use (PEP 562), so importing a light submodule such as
``monitor.config.durations`` (as `slamon agent` does) does not load pydantic, YAML and the
models behind them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.config.loader import load_config, parse_config
    from monitor.config.models import ChannelConfig, Config, ProviderConfig, TargetConfig

__all__ = [
    "ChannelConfig",
    "Config",
    "ProviderConfig",
    "TargetConfig",
    "load_config",
    "parse_config",
]

_HOMES = {
    "load_config": "monitor.config.loader",
    "parse_config": "monitor.config.loader",
    "ChannelConfig": "monitor.config.models",
    "Config": "monitor.config.models",
    "ProviderConfig": "monitor.config.models",
    "TargetConfig": "monitor.config.models",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'monitor.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
