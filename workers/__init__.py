"""Celery workers: play queued matches through the engine service and record them.

Empty for now: the match runner they will call is `workers.runner`, and the
service that records a finished match exactly once is
`ladder.matches.services.match_record_result`.
"""
