"""``kubernetes``: a cluster's nodes, GPU nodes by default (``label_selector``), through the
official client. Credentials come from a kubeconfig (``kubeconfig``, ``context``; the default
one otherwise), or the pod's service account (``in_cluster``); ``host`` (with ``token``)
points at an API server directly, or past a proxy. The nodes are listed in pages of
:data:`PAGE`; what each node says is read by :mod:`monitor.discovery.kube_nodes`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from pydantic import Field, model_validator

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.kube_nodes import NodeListError, page
from monitor.discovery.model import Instance
from monitor.errors import SweepFailed
from monitor.events.words import one_line

PAGE = 500  # nodes a request (kubectl's own chunk size)
MAX_PAGES = 1000  # a server that always says "continue" fails the sweep instead of looping


class KubernetesOptions(SourceOptions):
    label_selector: str = "nvidia.com/gpu.present=true"  # GPU Feature Discovery's label
    kubeconfig: str | None = None  # a path (~ expanded); default: $KUBECONFIG or ~/.kube/config
    context: str | None = None  # a kubeconfig context; default: its current one
    in_cluster: bool = False  # the pod's service account
    host: str | None = Field(default=None, pattern=r"^https?://")  # the API server's URL
    token: str | None = Field(default=None, repr=False)  # with host: sent as a Bearer token

    @model_validator(mode="after")
    def _one_way_in(self) -> KubernetesOptions:
        if self.in_cluster and (self.kubeconfig or self.context):
            raise ValueError("in_cluster: the service account's, not a kubeconfig's (drop one)")
        if self.token and not self.host:
            raise ValueError("token: goes with host")
        return self


def list_instances(options: KubernetesOptions, context: SweepContext) -> Sequence[Instance]:
    from kubernetes import client  # only a process that sweeps this kind loads it

    configuration = _configuration(options)
    server = str(configuration.host)
    api_client: Any = client.ApiClient(configuration)  # partly annotated (close is not)
    try:
        return _nodes(client.CoreV1Api(api_client), server, options, context)
    finally:
        api_client.close()
        api_client.rest_client.pool_manager.clear()  # its connections, now (not at exit)


def _nodes(
    api: Any, server: str, options: KubernetesOptions, context: SweepContext
) -> list[Instance]:
    """Every node the selector matches, page by page."""
    found: list[Instance] = []
    token: str | None = None
    for _ in range(MAX_PAGES):
        document = _get(api, server, options.label_selector, token, context.timeout_s)
        try:
            nodes, token = page(document)
        except NodeListError as exc:
            raise SweepFailed(f"kubernetes: {server} answered a malformed NodeList: {exc}") from (
                None
            )
        found += nodes
        if token is None:
            return found
    raise SweepFailed(f"kubernetes: {server} kept paging past {MAX_PAGES * PAGE} nodes")


def _configuration(options: KubernetesOptions) -> Any:
    """The client's configuration: the server and credentials, or ``SweepFailed`` saying why
    there are none."""
    from kubernetes import client, config

    configuration = client.Configuration()
    where = "the pod's service account" if options.in_cluster else "the kubeconfig"
    try:
        if options.in_cluster:
            # the client's config loaders are unannotated
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        elif options.kubeconfig or options.context or not options.host:
            path = os.path.expanduser(options.kubeconfig) if options.kubeconfig else None
            where = f"kubeconfig {path}" if path else where
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=path,
                context=options.context,
                client_configuration=configuration,
                persist_config=False,
            )
    except Exception as exc:  # the loaders raise ConfigException, OSError, yaml's errors …
        raise SweepFailed(f"kubernetes: cannot read {where}: {_said(exc)}") from None
    _override(configuration, options)
    configuration.retries = False  # one try a sweep: the next sweep is the retry
    return configuration


def _override(configuration: Any, options: KubernetesOptions) -> None:
    """Set ``host`` and ``token`` over what a kubeconfig said, and keep them set: a
    kubeconfig's token refresh (run before each request) writes its server back."""

    def apply(target: Any) -> None:
        if options.host:
            target.host = options.host.rstrip("/")
        if options.token:
            target.api_key = {"authorization": f"Bearer {options.token}"}

    apply(configuration)
    refresh = configuration.refresh_api_key_hook
    if refresh is not None and (options.host or options.token):

        def refreshed(target: Any) -> None:
            refresh(target)
            apply(target)

        configuration.refresh_api_key_hook = refreshed


def _get(api: Any, server: str, selector: str, token: str | None, timeout_s: float) -> Any:
    """One page of ``GET /api/v1/nodes``, decoded; ``SweepFailed`` for any failure."""
    from kubernetes.client.exceptions import ApiException

    try:
        response = api.list_node(
            label_selector=selector or None,
            limit=PAGE,
            _continue=token,
            _request_timeout=timeout_s,
            _preload_content=False,  # the bytes: kube_nodes reads them, not the client's models
        )
        try:
            body = response.data
        finally:
            response.release_conn()
    except ApiException as exc:
        if not exc.status:  # the client's wrapping of a TLS failure
            raise SweepFailed(f"kubernetes: {server} unreachable: {_tls(exc.reason)}") from None
        said = _status_message(exc.body) or exc.reason or ""
        raise SweepFailed(
            f"kubernetes: {server} answered HTTP {exc.status}: {one_line(said)}".rstrip(": ")
        ) from None
    except Exception as exc:  # urllib3's connection errors and timeouts
        if "timeout" in _innermost(exc).__class__.__name__.lower():
            raise SweepFailed(f"kubernetes: {server} timed out after {timeout_s:g} s") from None
        raise SweepFailed(f"kubernetes: {server} unreachable: {_said(exc)}") from None
    try:
        return json.loads(body)
    except ValueError as exc:
        raise SweepFailed(f"kubernetes: {server} answered a malformed NodeList: {exc}") from None


def _tls(reason: object) -> str:
    """What a TLS failure was, from the client's paragraph about it: ``TLS: certificate verify
    failed: self-signed certificate``."""
    text = " ".join(str(reason).split())
    found = re.search(r"\[SSL[^\]]*\] ([^'\"(]+)", text)
    return f"TLS: {found.group(1).strip()}" if found else one_line(text)


def _status_message(body: Any) -> str | None:
    """The ``message`` of the API server's Status answer (``nodes is forbidden: User …``)."""
    try:
        status = json.loads(body) if body else None
    except (TypeError, ValueError):
        return one_line(body) if isinstance(body, str) else None
    message = status.get("message") if isinstance(status, dict) else None
    return message if isinstance(message, str) else None


def _innermost(exc: BaseException) -> BaseException:
    """The error under urllib3's wrappers (a MaxRetryError's reason, what a NewConnectionError
    was raised from)."""
    seen = {id(exc)}
    while True:
        inner = getattr(exc, "reason", None)
        if not isinstance(inner, BaseException):
            inner = exc.__cause__ or exc.__context__
        if inner is None or id(inner) in seen:
            return exc
        seen.add(id(inner))
        exc = inner


def _said(error: object) -> str:
    """What went wrong, in one line: the operating system's words where there are some
    (``Connection refused``), else the error's own first line."""
    if isinstance(error, BaseException):
        inner = _innermost(error)
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror
        return one_line(inner) or type(inner).__name__
    return one_line(error)


KIND = DiscoveryKind(
    name="kubernetes",
    options=KubernetesOptions,
    list_instances=list_instances,
    requires=("kubernetes",),
    extra="kubernetes",
)
