"""The alertmanager channel's config: one ``url`` or the ``urls`` of an HA cluster, a
``resend_every``, and a clear line for each mistake (monitor/config/models.py ChannelConfig)."""

from __future__ import annotations

import pytest

from monitor.config import parse_config
from monitor.errors import ConfigError


def channel(fields: str) -> str:
    return f"channels:\n  - {{name: am, {fields}}}\n"


def test_one_alertmanager_is_its_url_resent_every_minute_by_default() -> None:
    [am] = parse_config(channel("kind: alertmanager, url: 'http://am:9093'")).channels

    assert (am.addresses, am.resend_s) == (["http://am:9093"], 60.0)


def test_a_cluster_names_each_alertmanager_in_urls() -> None:
    text = channel(
        "kind: alertmanager, urls: ['http://am-0:9093', 'https://am-1/prefix'], resend_every: 30s"
    )
    [am] = parse_config(text).channels

    assert am.addresses == ["http://am-0:9093", "https://am-1/prefix"]
    assert am.url == "http://am-0:9093"
    assert am.resend_s == 30.0
    assert "am-0" not in repr(am)  # URLs may hold basic-auth credentials


def test_a_cluster_config_written_out_and_read_again_is_the_same() -> None:
    config = parse_config(channel("kind: alertmanager, urls: ['http://a:9093', 'http://b:9093']"))

    again = parse_config(config.model_dump_json(by_alias=True))

    assert again.channels == config.channels


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        pytest.param(
            "kind: alertmanager",
            "channels[0] (line 2): url (one Alertmanager) or urls (each of a cluster) is required",
            id="neither",
        ),
        pytest.param(
            "kind: alertmanager, url: 'http://a:9093', urls: ['http://b:9093']",
            "channels[0] (line 2): give url (one Alertmanager) or urls (each of a cluster), "
            "not both",
            id="both",
        ),
        pytest.param(
            "kind: alertmanager, urls: []",
            "channels[0] (line 2): urls: must name at least one Alertmanager",
            id="empty-urls",
        ),
        pytest.param(
            "kind: alertmanager, urls: 'http://a:9093'",
            "channels[0] (line 2): urls: must be a list of the Alertmanagers' URLs",
            id="urls-not-a-list",
        ),
        pytest.param(
            "kind: alertmanager, urls: ['http://a:9093', 'http://a:9093']",
            "channels[0] (line 2): urls: an Alertmanager is named twice",
            id="twice",
        ),
        pytest.param(
            "kind: alertmanager, urls: ['http://a:9093', 'tcp://b:9093']",
            "channels[0] (line 2): an Alertmanager's URL must be http:// or https://",
            id="not-http",
        ),
        pytest.param(
            "kind: alertmanager, url: 'http://a:9093', secret: s3cret",
            "channels[0] (line 2): secret: not used by kind alertmanager (put basic-auth "
            "credentials in the URL: http://user:password@host:9093)",
            id="secret",
        ),
        pytest.param(
            "kind: alertmanager, url: 'http://a:9093', resend_every: 0.5",
            "channels[0].resend_every (line 2): must be ≥ 1 s",
            id="resend-too-often",
        ),
        pytest.param(
            "kind: webhook, url: 'http://a/', urls: ['http://b/']",
            "channels[0] (line 2): urls: only for kind alertmanager",
            id="urls-on-a-webhook",
        ),
        pytest.param(
            "kind: slack, url: 'https://hooks.slack.com/x', resend_every: 1m",
            "channels[0] (line 2): resend_every: only for kind alertmanager",
            id="resend-on-slack",
        ),
    ],
)
def test_each_mistake_is_one_clear_line(fields: str, said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(channel(fields))

    assert str(raised.value) == said
