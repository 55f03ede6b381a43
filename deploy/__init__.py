"""Running the whole ladder: ``make run`` (``python -m deploy.run``), on one machine."""
