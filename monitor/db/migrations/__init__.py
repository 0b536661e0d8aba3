"""Alembic's environment and revisions, shipped inside the package. A package so that the layer
check (tests/test_architecture.py) sees their imports: Alembic itself loads them by path."""
