"""slamon: SLA and provider-health monitoring for teams that train on rented GPUs."""

__version__ = "0.1.0"
