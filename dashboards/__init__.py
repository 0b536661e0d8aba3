"""slamon's Grafana dashboards: the JSON files and the code that generates them (build.py)."""
