"""What the two AWS kinds share, without importing the SDK: the retry budget, the one line an
error becomes, and the check of what a region is."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from monitor.errors import EventPollFailed

RETRIES = 2  # attempts per request, the first included: the next poll is the retry
Region = Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z0-9]+)+$")]  # us-east-1, us-gov-west-1


def client_error_code(exc: Any) -> str:
    """The error code of a botocore ``ClientError`` (``SubscriptionRequiredException``)."""
    error = (getattr(exc, "response", None) or {}).get("Error") or {}
    return str(error.get("Code") or type(exc).__name__)


def client_error(exc: Any) -> str:
    """What AWS said in a botocore ``ClientError``: its code and message."""
    error = (getattr(exc, "response", None) or {}).get("Error") or {}
    return f"{client_error_code(exc)}: {error.get('Message') or exc}"


def failed(where: str, said: str) -> EventPollFailed:
    """One line naming ``where`` (the kind, a region) and what AWS said, whatever it sent."""
    return EventPollFailed(" ".join(f"{where}: {said}".split())[:300])
