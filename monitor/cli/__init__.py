"""The `slamon` command line (docs/DESIGN.md's contract). User errors print one line and exit
non-zero; tracebacks are for bugs only."""

from __future__ import annotations

from typing import Any

import click

from monitor import __version__
from monitor.errors import ConfigError, SlamonError


class SlamonGroup(click.Group):
    """A click group that turns slamon's own errors into clear messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            for problem in exc.problems:
                click.echo(f"error: {problem}", err=True)
            ctx.exit(1)
        except SlamonError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            message = _database_error(exc)
            if message is None:
                raise  # a bug: the traceback is for us
            click.echo(f"error: {message}", err=True)
            ctx.exit(1)


def _database_error(exc: Exception) -> str | None:
    """One line for a database that is down or refuses us mid-command (the driver's reason,
    which names host and port but never the password); None for anything else."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    reason = str(getattr(exc, "orig", exc)).strip().splitlines() or [type(exc).__name__]
    return f"database unavailable: {reason[0]}"


@click.group(cls=SlamonGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="slamon")
def cli() -> None:
    """slamon: SLA and provider-health monitor for rented GPUs."""


def _register() -> None:
    from monitor.cli import (
        alerts_cmd,
        config_cmd,
        feeds_cmd,
        grafana_cmd,
        probe_cmd,
        report_cmd,
        secrets_cmd,
        serve,
        token_cmd,
    )

    groups = (
        config_cmd.config,
        feeds_cmd.feeds,
        probe_cmd.probe,
        token_cmd.token,
        report_cmd.report,
        alerts_cmd.alerts,
        report_cmd.import_,
        grafana_cmd.grafana,
        secrets_cmd.secrets_group,
    )
    for command in (*serve.COMMANDS, *groups):
        cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="slamon")


if __name__ == "__main__":  # pragma: no cover
    main()
