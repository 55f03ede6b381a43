"""The ladder's gRPC service for bot authors (protos/digdown/v1/ladder.proto).

``servicer.py`` is a thin layer over the services and selectors, one module per
group of methods (``bots``, ``boards``, ``matches``, ``tournaments``,
``competitions``; ``messages`` and ``paging`` build their answers); ``auth.py`` is
the interceptor that every call goes through (database connection hygiene,
token authentication, throttling, error mapping); ``server.py`` builds the
server that ``manage.py grpcserver`` runs.
"""
