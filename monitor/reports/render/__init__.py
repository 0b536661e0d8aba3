"""Rendering a monthly report: one module per format (``html``, ``pdf``, ``csv``, ``json``),
registered by name in ``formats``; ``tables`` holds the rows the HTML and PDF share, ``charts``
the HTML's inline SVG, ``codec`` the JSON/CSV value encoding. Importing this package loads no
renderer: reportlab is imported only where a PDF is made.
"""
