"""Persistence: models, engines, migrations and dialect differences."""
