"""Account event sources: what each provider tells the account alone (a retirement scheduled
for an instance, maintenance, an incident on the project's services), read by one module per
kind in ``monitor/account/kinds/`` into :class:`~monitor.account.model.AccountEvent` records.
No storage, no YAML: the caller polls, keeps the checkpoint, and stores."""
