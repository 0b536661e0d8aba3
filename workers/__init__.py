"""slamon's Celery side: the app, its beat schedule and the thin tasks that call `monitor`."""
