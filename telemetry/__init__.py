"""What operators see of every process: Prometheus metrics and structured logs.

Each process of the ladder (web, Ladder gRPC, workers, engine) exposes its
metrics through ``telemetry.metrics`` and logs through ``telemetry.logs``; the
metrics themselves are defined beside the code they count (``workers.metrics``,
``ladder.common.metrics``, ``engine.metrics``). The dashboard and alert rules
that read them are in ``deploy/monitoring/``; docs/operations.md says what each
one answers. This package imports nothing of ours, so every process can use it.
"""
