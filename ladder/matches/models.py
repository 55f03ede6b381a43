"""Tournaments, version comparisons, deals, matches, seats and the one recorded result.

A ``Deal`` is one dealt cave (a seed) played once per seat rotation of one
table (``ladder.matchmaking.deals``): its matches share the seed and carry their
rotation index. Tournaments and version comparisons own their deals and
matches; their schedules, standings and statistics are computed by the pure
modules in ``ladder.tournaments`` and ``ladder.matchmaking``.

``MatchResult`` is a one-to-one row per match: the database itself refuses a
second result (aiarena's shape). Its auto-increment id is the order in which
results were recorded; ``rerate`` replays ratings in that order.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ladder.ladders import Difficulty


class Tournament(models.Model):
    """A round robin or Swiss tournament between its participants (``ladder.tournaments``).

    Created pending; ``tournament_start`` schedules its matches (all of a round
    robin, the first round of a Swiss) and makes it running; it is finished when
    its last match is closed and no round is left. Its matches are unrated
    unless ``rated``, and are played before ladder matches (``Match.priority``).
    """

    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        SWISS = "swiss", "swiss"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        FINISHED = "finished"

    name = models.CharField(max_length=100, unique=True)
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.ROUND_ROBIN)
    participants = models.ManyToManyField("bots.Bot", related_name="tournaments", blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    rated = models.BooleanField(
        default=False, help_text="Whether its matches change ladder ratings (default: no)."
    )
    seats = models.PositiveSmallIntegerField(
        default=2, help_text="Seats per match (Swiss: 2 only)."
    )
    duplicate = models.BooleanField(
        default=False,
        help_text="Play each table as a duplicate deal: one seed, every seat rotation.",
    )
    rounds = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Swiss: rounds to play (default: ceil(log2 n))."
    )
    ladder = models.CharField(
        max_length=32, blank=True, help_text="Ladder key whose game it plays (default: default)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class TournamentBye(models.Model):
    """A Swiss round's bye: the odd participant out, who scores a win without playing."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="byes")
    round = models.PositiveSmallIntegerField()
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["tournament", "round"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "round"], name="tournamentbye_one_per_round"
            )
        ]


class VersionComparison(models.Model):
    """An owner's question "is ``new_version`` better than ``old_version``?".

    Each of ``deals`` seeds is dealt twice, once with each version against the
    same opponents, every seat rotation (``Deal.comparison_side``); the answer
    is paired statistics over the deals (``ladder.matchmaking.comparison``),
    computed from the matches whenever it is read. Unrated.
    """

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="comparisons")
    old_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    new_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    opponents = models.ManyToManyField("bots.Bot", related_name="+")
    deals = models.PositiveSmallIntegerField()
    ladder = models.CharField(max_length=32, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"comparison {self.pk}"


class Deal(models.Model):
    """One dealt cave: a seed played by one table once per seat rotation.

    Its matches carry ``deal_rotation`` r: seat s holds table[(s - r) mod n]
    (``ladder.matchmaking.deals.rotations``), so every bot plays every seat of
    the same cave and its result over the set measures the bot, not the deal.
    """

    class Side(models.TextChoices):
        OLD = "old"
        NEW = "new"

    seed = models.BigIntegerField()
    seats = models.PositiveSmallIntegerField(help_text="Table size = number of rotations.")
    tournament = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.CASCADE, related_name="deals"
    )
    comparison = models.ForeignKey(
        VersionComparison,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="deal_set",
    )
    comparison_index = models.PositiveSmallIntegerField(null=True, blank=True)
    comparison_side = models.CharField(max_length=3, blank=True, choices=Side.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(seed__gte=0), name="deal_seed_nonnegative"),
            models.UniqueConstraint(
                fields=["comparison", "comparison_index", "comparison_side"],
                name="deal_comparison_unique",
                condition=Q(comparison__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"deal {self.pk}"


class Match(models.Model):
    """A game between 2-4 bots, from queued to finished (or errored/cancelled)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        ERRORED = "errored"
        CANCELLED = "cancelled"

    Difficulty = Difficulty

    ladder = models.CharField(
        max_length=32,
        blank=True,
        help_text="Key of the ladder it is played on (its ratings); empty: off-ladder, unrated.",
    )
    ruleset = models.CharField(max_length=16, default="dd-1")
    seed = models.BigIntegerField()
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, default="normal")
    rated = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    tournament = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.PROTECT, related_name="matches"
    )
    tournament_round = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Swiss: the round it belongs to (from 1)."
    )
    deal = models.ForeignKey(
        Deal, null=True, blank=True, on_delete=models.PROTECT, related_name="matches"
    )
    deal_rotation = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Seat rotation within its deal (0..seats-1)."
    )
    priority = models.PositiveSmallIntegerField(
        default=0,
        help_text="Queue priority: 0 ladder; higher is played first (tournaments, comparisons).",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When a play-match message was last sent for it: a queued match whose message is
    # older than LADDER_QUEUED_GRACE_S is presumed lost and sent again (the janitor).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    replay = models.FileField(upload_to="replays/", blank=True, max_length=255)
    replay_sha256 = models.CharField(max_length=64, blank=True)
    replay_size = models.PositiveBigIntegerField(default=0)

    class Meta:
        # Ids are allocated in creation order: newest first is ``-id``, which keyset
        # pagination and the indexes below serve without a sort.
        ordering = ["-id"]
        verbose_name_plural = "matches"
        constraints = [
            models.CheckConstraint(condition=Q(seed__gte=0), name="match_seed_nonnegative"),
            models.CheckConstraint(
                condition=~Q(status="finished") | ~Q(replay_sha256=""),
                name="match_finished_has_replay",
            ),
            models.CheckConstraint(
                condition=Q(rated=False) | ~Q(ladder=""), name="match_rated_has_ladder"
            ),
            models.CheckConstraint(
                condition=Q(deal__isnull=True, deal_rotation__isnull=True)
                | Q(deal__isnull=False, deal_rotation__isnull=False),
                name="match_deal_has_rotation",
            ),
            models.UniqueConstraint(
                fields=["deal", "deal_rotation"],
                name="match_deal_rotation_unique",
                condition=Q(deal__isnull=False),
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-id"], name="match_status_idx"),
            models.Index(fields=["ladder", "-id"], name="match_ladder_idx"),
            models.Index(fields=["tournament", "-id"], name="match_tournament_idx"),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"


class MatchSeat(models.Model):
    """One bot's seat in one match, with its outcome and rating before/after."""

    class Ended(models.TextChoices):
        """How the seat's game ended (docs/engine-api.md, Result); empty until then."""

        WON = "won"
        FINISHED = "finished"
        ELIMINATED = "eliminated"
        FORFEITED = "forfeited"

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    # Indexed by the (bot, match) and (bot, result) indexes below.
    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.PROTECT, related_name="seats", db_index=False
    )
    version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="seats")
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    score = models.IntegerField(null=True, blank=True, help_text="Loot points at the end.")
    faults = models.PositiveSmallIntegerField(default=0)
    ended = models.CharField(max_length=12, blank=True, choices=Ended.choices)
    forfeit_reason = models.CharField(max_length=200, blank=True)
    rating_before = models.IntegerField(null=True, blank=True)
    rating_after = models.IntegerField(null=True, blank=True)
    # Hosted seats: the bot's captured stdout+stderr (capped), for its owner and staff only.
    log = models.FileField(upload_to="logs/", blank=True, max_length=255)
    log_size = models.PositiveIntegerField(default=0)
    result = models.ForeignKey(
        "MatchResult",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="seats",
        db_index=False,
        help_text="Set when the result is recorded: its id orders a bot's rating history.",
    )

    class Meta:
        ordering = ["match", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="matchseat_match_seat_unique"),
            models.UniqueConstraint(fields=["match", "bot"], name="matchseat_match_bot_unique"),
        ]
        indexes = [
            # A bot's matches, newest first (keyset pagination by match id).
            models.Index(fields=["bot", "-match"], name="matchseat_bot_match_idx"),
            # A bot's rating history, latest first, in recording order.
            models.Index(
                fields=["bot", "-result"],
                name="matchseat_bot_result_idx",
                condition=Q(result__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} seat {self.seat}: {self.bot_id}"

    @property
    def rating_delta(self) -> int | None:
        if self.rating_before is None or self.rating_after is None:
            return None
        return self.rating_after - self.rating_before


class MatchResult(models.Model):
    """The single recorded result of a match; its id orders rating updates."""

    class Reason(models.TextChoices):
        """Why the game ended (docs/engine-api.md, Result)."""

        WON = "won"
        LAST_STANDING = "last_standing"
        CAVE_EXHAUSTED = "cave_exhausted"
        TURN_LIMIT = "turn_limit"

    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="result")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    winner = models.SmallIntegerField(help_text="Winning seat or -1.")
    turns = models.PositiveIntegerField(default=0)
    rounds = models.PositiveIntegerField(default=0)
    data = models.JSONField(help_text="The engine's Result dict, as recorded.")
    elo_k = models.FloatField(help_text="K used for this match (0 when unrated).")
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"result #{self.pk} of match {self.match_id}"
