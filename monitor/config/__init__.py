"""The YAML config: models and loading."""

from monitor.config.loader import BUILTIN_SLA_POLICIES, load_config, parse_config
from monitor.config.models import ChannelConfig, Config, ProviderConfig, TargetConfig

__all__ = [
    "BUILTIN_SLA_POLICIES",
    "ChannelConfig",
    "Config",
    "ProviderConfig",
    "TargetConfig",
    "load_config",
    "parse_config",
]
