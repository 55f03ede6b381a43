"""A competition: an entry window, a submission freeze, a final that settles the order.

- ``Competition``: the event (its phase, its times, how its final is played, and
  the final's live view and result, kept on the row so a page reads one row).
- ``CompetitionEntry``: a bot entered, the version the freeze locked for the
  final, its qualification seed and its final place with the place's interval.
- ``CompetitionInvitation``: who may enter an invitation-only competition, and the
  bots invited to a private tournament (accepted by their owners).
- ``FinalDeal``: one duplicate deal of the final, under the key the pure final
  (``ladder.competitions.final``) gave it, with its pair shares once recorded.
- ``CompetitionFollower``: a user told of a competition's news without an entry in it.

A private tournament is a ``Competition`` with ``private`` set: a user's own bots
and invited ones, no entry window, a final started by its creator.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ladder.competitions.final import Format


class Competition(models.Model):
    """One competition (or private tournament); see the module."""

    class Phase(models.TextChoices):
        ANNOUNCED = "announced"  # before entry opens
        ENTRY = "entry"  # entry open; qualification is the ladder among the entrants
        FROZEN = "frozen"  # versions locked; the final has not started
        FINAL = "final"  # the final is being played
        FINISHED = "finished"

    class Entry(models.TextChoices):
        OPEN = "open"
        INVITATION = "invitation"

    name = models.CharField(max_length=100, unique=True)
    rules = models.TextField(blank=True, help_text="The rules in words, shown on its page.")
    ladder = models.CharField(max_length=32, blank=True, help_text="Ladder key (empty: default).")
    entry = models.CharField(max_length=12, choices=Entry.choices, default=Entry.OPEN)
    private = models.BooleanField(default=False, help_text="A user's private tournament.")
    entry_opens_at = models.DateTimeField()
    freeze_at = models.DateTimeField()
    final_starts_at = models.DateTimeField()
    entries_per_user = models.PositiveSmallIntegerField(default=1)
    final_size = models.PositiveSmallIntegerField(
        default=16, help_text="How many entrants (best qualified first) play the final."
    )
    format = models.CharField(max_length=20, choices=[(f.value, f.value) for f in Format])
    seats = models.PositiveSmallIntegerField(default=2)
    confidence = models.FloatField(default=0.95)
    min_deals = models.PositiveSmallIntegerField(default=2)
    max_games = models.PositiveIntegerField(default=2000)
    matchup_max_deals = models.PositiveSmallIntegerField(default=16)
    group_max_deals = models.PositiveSmallIntegerField(default=12)
    top = models.PositiveSmallIntegerField(default=4, help_text="Places whose order is settled.")
    advance = models.PositiveSmallIntegerField(default=2, help_text="Groups: top k advance.")
    first_stage = models.CharField(max_length=20, default=Format.SWISS.value)
    finalists = models.PositiveSmallIntegerField(default=4, help_text="Multi-stage: top N.")
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.ANNOUNCED)
    phase_changed_at = models.DateTimeField(null=True, blank=True)
    final_view = models.JSONField(default=list, blank=True)
    result = models.JSONField(null=True, blank=True)
    games = models.PositiveIntegerField(default=0, help_text="Final matches recorded.")
    deals_open = models.PositiveIntegerField(default=0, help_text="Final deals not recorded.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-final_starts_at", "-id"]
        indexes = [models.Index(fields=["phase", "private"], name="competition_phase_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(entry_opens_at__lte=models.F("freeze_at"))
                & Q(freeze_at__lte=models.F("final_starts_at")),
                name="competition_times_in_order",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class CompetitionEntry(models.Model):
    """A bot entered in a competition; ``version`` is what the freeze locked for the final."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.CASCADE, related_name="competition_entries"
    )
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    entered_at = models.DateTimeField(auto_now_add=True)
    version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    seed = models.PositiveIntegerField(null=True, blank=True, help_text="Qualification place.")
    qualification_score = models.IntegerField(null=True, blank=True)
    finalist = models.BooleanField(default=False)
    place = models.PositiveIntegerField(null=True, blank=True)
    place_low = models.PositiveIntegerField(null=True, blank=True)
    place_high = models.PositiveIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["competition", "seed", "id"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "bot"], name="competitionentry_unique"),
        ]
        indexes = [models.Index(fields=["competition", "owner"], name="competitionentry_owner_idx")]


class CompetitionInvitation(models.Model):
    """An invitation: a user to an invitation-only competition, or a bot (``bot`` set) to a
    private tournament, which its owner accepts (``accepted_at``)."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="invitations"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    bot = models.ForeignKey(
        "bots.Bot", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "user"],
                condition=Q(bot__isnull=True),
                name="competitioninvitation_user_unique",
            ),
            models.UniqueConstraint(
                fields=["competition", "bot"],
                condition=Q(bot__isnull=False),
                name="competitioninvitation_bot_unique",
            ),
        ]


class FinalDeal(models.Model):
    """One duplicate deal of a final: its key and table, and its pair shares once played.

    ``recorded`` flips once, under the competition's lock, when every match of the
    deal is closed; ``pairs`` is None for a deal with an errored match.
    """

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="deals")
    key = models.CharField(max_length=64)
    table = models.JSONField(help_text="Bot ids in seat order of rotation 0.")
    deal = models.OneToOneField(
        "tournaments.Deal",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="competition_deal",
        help_text="None: forfeited (a bot could no longer play), recorded at once.",
    )
    recorded = models.BooleanField(default=False)
    pairs = models.JSONField(null=True, blank=True, help_text='{"a-b": share of a over b}')
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["competition", "recorded"], name="finaldeal_open_idx"),
        ]


class CompetitionFollower(models.Model):
    """A signed-in user who follows a public competition without (or before) entering it:
    told its phases and its result as its entrants' owners are (``events``)."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="followers")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="competitions_followed"
    )
    followed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "user"], name="competitionfollower_unique"
            ),
        ]
