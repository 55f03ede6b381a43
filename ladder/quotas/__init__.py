"""Per-user quotas, every one of them (``catalogue``), and the one way one is taken (``take``).

A quota limits what one user holds or makes in a day (bots, stored versions and
bytes, open challenges, challenges, comparisons, private tournaments, a connected
bot's new version labels): a setting each (``LADDER_QUOTA_*``, docs/operations.md),
0 meaning unlimited, staff exempt. Each app counts its own rows (they are the
units) and hands the counts to ``quota_take``, which locks the user's row first so
that two requests at once cannot both take the last unit. Limits per time window
that count units rather than rows (sign-ups per address, exports) are
``ladder.accounts.counters.WindowLimit``, on a table of the accounts app.
"""
