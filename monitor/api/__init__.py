"""The HTTP side: REST API, /healthz, /metrics."""
