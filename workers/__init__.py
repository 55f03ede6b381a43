"""Everything that plays a match: Celery tasks, the match runner, the one-match CLI.

``celery -A workers.celery_app worker`` plays every queued match exactly once
(``workers/tasks.py`` -> ``workers/queued_match.py``), through the runner
(``workers/runner/``) and the ladder's services; ``python -m workers.play``
runs one match without the ladder. docs/workers.md describes the whole.
Importing this package imports neither Django nor Celery.
"""
