"""Probing the team's GPU instances: one probe contract, one module per kind, a shard runner."""
