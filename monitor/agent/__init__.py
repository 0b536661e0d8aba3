"""`slamon agent`: a small process on each GPU box that reads its GPUs (NVML, else nvidia-smi)
and pushes them to slamon as heartbeats, where they are judged like a dcgm-exporter scrape.

It imports only what it uses (httpx, the GPU reading types): no Celery, SQLAlchemy, FastAPI or
report stack, checked by tests/test_imports.py.
"""
