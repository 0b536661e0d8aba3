"""The fleet as the discovery sources see it: sweeps that register, update and retire
targets (``sweep``), decided by a pure plan (``plan``)."""
