"""What every slamon dashboard is built from, over Grafana's Foundation SDK.

The helpers make the right thing the default: every variable is multi-value with "All" and the
custom allValue ``'__all__'`` the SQL tests for (without it, "All" over an empty option list is
``IN ()``, a syntax error); a bar gauge or pie chart of rows shows every row, not one value
reduced from them; a panel's query format follows from its kind.

``queries``: the datasource, raw SQL targets and ``sql`` (a query as Grafana sends it);
``panels``: where a panel sits and one builder per panel kind; ``board``: the variables and
the dashboard around the panels.
"""
