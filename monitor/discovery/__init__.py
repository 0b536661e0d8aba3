"""Discovery: what the clouds, Kubernetes and Prometheus' service-discovery files say the fleet
is. Pure records (``model``), the kinds of source (``kinds/``, one module each), a target
template's rendering and the GPU instance-type table. The sweep that turns instances into
targets lives in ``monitor.fleet``."""
