"""One module per dashboard, each with its ``dashboard()`` builder (listed in build.py)."""
