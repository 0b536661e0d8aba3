"""The status page's model: pure history and health rules, and the queries that feed them."""
