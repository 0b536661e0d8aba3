"""Process settings (monitor/settings.py): the public URL alerts link under."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from monitor.settings import Settings


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        pytest.param("https://slamon.example.com", "https://slamon.example.com", id="plain"),
        pytest.param("https://slamon.example.com/", "https://slamon.example.com", id="slash"),
        pytest.param("http://10.0.0.5:8000/ops//", "http://10.0.0.5:8000/ops", id="sub-path"),
        pytest.param("  https://s.example  ", "https://s.example", id="spaces"),
        pytest.param("", None, id="empty-is-unset"),
    ],
)
def test_the_public_url_is_kept_without_its_trailing_slash(
    monkeypatch: pytest.MonkeyPatch, given: str, kept: str | None
) -> None:
    monkeypatch.setenv("SLAMON_PUBLIC_URL", given)

    assert Settings().public_url == kept


def test_without_the_variable_there_is_no_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLAMON_PUBLIC_URL", raising=False)

    assert Settings().public_url is None


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        pytest.param("slamon.example.com", "must be an http(s) URL", id="no-scheme"),
        pytest.param("ftp://slamon.example.com", "must be an http(s) URL", id="ftp"),
        pytest.param("javascript:alert(1)", "must be an http(s) URL", id="javascript"),
        pytest.param("https://", "must be an http(s) URL", id="no-host"),
        pytest.param("https://s.example/?a=1", "query or a fragment", id="query"),
        pytest.param("https://s.example/#top", "query or a fragment", id="fragment"),
    ],
)
def test_a_public_url_that_is_not_http_is_refused_saying_why(
    monkeypatch: pytest.MonkeyPatch, given: str, problem: str
) -> None:
    monkeypatch.setenv("SLAMON_PUBLIC_URL", given)

    with pytest.raises(ValidationError, match="public_url") as caught:
        Settings()
    assert problem in str(caught.value)
