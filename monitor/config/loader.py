"""Reading the YAML config: environment interpolation, validation, and problems that name
their place in the file (``targets[3].interval (line 12): must be ≥ 1 s``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from monitor.config.models import Config, TargetConfig, policy_providers
from monitor.errors import ConfigError
from monitor.sla.policy_config import policy_from_config
from monitor.sla.terms import BUILTIN_POLICIES

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def load_config(path: Path, *, missing_ok: bool = False) -> Config:
    """The validated config in ``path``; an empty config when it is absent and ``missing_ok``.

    Raises ``ConfigError`` whose ``problems`` hold one line per problem.
    """
    if not path.exists():
        if missing_ok:
            return Config()
        raise ConfigError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse_config(text)


TOO_DEEP = "the whole document: YAML nested too deeply, or an alias that contains itself"


def parse_config(text: str) -> Config:
    """Validate YAML text as a config; ``ConfigError`` lists every problem found."""
    try:
        return _parse_config(text)
    except RecursionError:  # `a: &x [*x]` or thousands of `[`: hostile or broken, not a config
        raise ConfigError(TOO_DEEP) from None


# libyaml's parser where PyYAML has it (its wheels do): a config of thousands of targets reads
# in a fraction of a second instead of seconds, in every process that starts
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse_config(text: str) -> Config:
    try:
        loader = SAFE_LOADER(text)
        try:
            root = loader.get_single_node()  # the nodes keep their lines for error messages
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {_one_line(str(exc))}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the config must be a mapping with keys like providers, targets")
    problems: list[str] = []
    data = _interpolate(data, (), problems, root)
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems += [_describe(err, root) for err in exc.errors()]
        raise ConfigError(problems) from None
    problems += [_describe_path(loc, msg, root) for loc, msg in cross_check(config)]
    if problems:
        raise ConfigError(problems)
    return config


def cross_check(config: Config) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Problems no single field can see: duplicate names and dangling references."""
    yield from _duplicates("targets", [t.name for t in config.targets])
    yield from _duplicates("channels", [c.name for c in config.channels])
    yield from _duplicates("providers", [p.slug for p in config.providers])
    yield from _duplicates("pools", [p.name for p in config.pools])
    known_policies = set(BUILTIN_POLICIES)
    for i, raw in enumerate(config.sla_policies):
        try:
            known_policies.add(_user_policy_name(raw))
        except ValueError as exc:
            yield ("sla_policies", i), str(exc)
    channel_names = {c.name for c in config.channels}
    for i, route in enumerate(config.routes):
        for j, name in enumerate(route.channels):
            if name not in channel_names:
                yield ("routes", i, "channels", j), f"no channel named {name!r}"
    providers = policy_providers(config.sla_policies)
    for i, target in enumerate(config.targets):
        if target.sla is not None and target.sla not in known_policies:
            yield ("targets", i, "sla"), f"unknown SLA policy {target.sla!r}"
        elif (
            target.provider and providers.get(target.sla or "", target.provider) != target.provider
        ):
            yield ("targets", i, "provider"), _contradiction(target, providers[target.sla or ""])


def _contradiction(target: TargetConfig, policy_provider: str) -> str:
    return (
        f"target {target.name!r} names provider {target.provider!r}, but its SLA policy "
        f"{target.sla!r} belongs to provider {policy_provider!r} (leave provider out, or "
        f"choose a policy of {target.provider!r})"
    )


def _user_policy_name(raw: dict[str, Any]) -> str:
    """Validate a user SLA policy (GPU clouds); its name, or ``ValueError`` naming the field."""
    return policy_from_config(raw).name


def _duplicates(section: str, names: list[str]) -> Iterator[tuple[tuple[Any, ...], str]]:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            yield (section, i), f"duplicate name {name!r}"
        seen.add(name)


def _interpolate(value: Any, loc: tuple[Any, ...], problems: list[str], root: Any) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in strings from the environment."""
    if isinstance(value, dict):
        return {k: _interpolate(v, (*loc, k), problems, root) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, (*loc, i), problems, root) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        problems.append(_describe_path(loc, f"environment variable {name} is not set", root))
        return ""

    return _ENV_REF.sub(substitute, value)


def _describe(error: Any, root: Any) -> str:
    loc = tuple(error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if error["type"] == "extra_forbidden":
        message = "unknown field (check the spelling)"
    return _describe_path(loc, message, root)


def _describe_path(loc: tuple[Any, ...], message: str, root: Any) -> str:
    path = format_path(loc)
    line = _line_of(root, loc)
    where = f"{path} (line {line})" if line else path
    return f"{where}: {message}" if where else message


def format_path(loc: tuple[Any, ...]) -> str:
    """``('targets', 3, 'interval')`` -> ``targets[3].interval``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _line_of(node: Any, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line in the YAML source that ``loc`` points at, when it can be found."""
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            break
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _one_line(text: str) -> str:
    return " ".join(text.split())
