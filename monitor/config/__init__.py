"""The YAML config: models and loading."""

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
