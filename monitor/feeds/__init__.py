"""Provider status feeds: one parser module per feed kind, behind a registry."""
