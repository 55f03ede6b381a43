"""Telling authors what happened to their bots: e-mail and signed webhooks, exactly once.

``services.notify`` is the one door: any app calls it inside the transaction of
the thing that happened (a bot suspended, a smoke match judged, a connected bot
refused, a competition's phase or result); it stores one delivery row per
channel the user chose, unique on (user, kind, key, channel), and a task sends
each row once (docs/notifications.md).
"""
