"""Alerting: rules, routing, and delivery to notification channels."""
