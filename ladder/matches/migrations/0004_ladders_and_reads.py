"""Matches on ladders, closed value sets, and what the reads at scale need.

``Match.ladder``: every match so far was on the one ladder there was, so all
get the ``dd-1`` ladder's key (every match before ladders was a dd-1 game).
``MatchSeat.result`` points at the recorded result (its id orders a bot's rating
history, indexed per bot). ``ended`` and ``reason`` become choices. Indexes serve
the list filters newest first (status, ladder, tournament, bot) without a sort.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import OuterRef, Subquery

# Every match before ladders existed was a dd-1 game: its ratings belong on the dd-1 ladder,
# whatever the default ladder is when this runs.
PRE_LADDER_KEY = "dd-1"


def forward(apps, schema_editor):
    Match = apps.get_model("matches", "Match")
    MatchResult = apps.get_model("matches", "MatchResult")
    MatchSeat = apps.get_model("matches", "MatchSeat")
    Match.objects.update(ladder=PRE_LADDER_KEY)
    result = MatchResult.objects.filter(match_id=OuterRef("match_id")).values("pk")[:1]
    MatchSeat.objects.update(result=Subquery(result))


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0004_ratings_per_ladder"),
        ("matches", "0003_match_enqueued_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="match",
            options={"ordering": ["-id"], "verbose_name_plural": "matches"},
        ),
        migrations.AddField(
            model_name="match",
            name="ladder",
            field=models.CharField(blank=True, help_text="Key of the ladder it is played on (its ratings); empty: off-ladder, unrated.", max_length=32),
        ),
        migrations.AddField(
            model_name="matchseat",
            name="result",
            field=models.ForeignKey(blank=True, db_index=False, help_text="Set when the result is recorded: its id orders a bot's rating history.", null=True, on_delete=django.db.models.deletion.CASCADE, related_name="seats", to="matches.matchresult"),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="match",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True),
        ),
        migrations.AlterField(
            model_name="match",
            name="status",
            field=models.CharField(choices=[("queued", "Queued"), ("running", "Running"), ("finished", "Finished"), ("errored", "Errored"), ("cancelled", "Cancelled")], default="queued", max_length=10),
        ),
        migrations.AlterField(
            model_name="matchresult",
            name="reason",
            field=models.CharField(choices=[("won", "Won"), ("last_standing", "Last Standing"), ("cave_exhausted", "Cave Exhausted"), ("turn_limit", "Turn Limit")], max_length=20),
        ),
        migrations.AlterField(
            model_name="matchseat",
            name="ended",
            field=models.CharField(blank=True, choices=[("won", "Won"), ("finished", "Finished"), ("eliminated", "Eliminated"), ("forfeited", "Forfeited")], max_length=12),
        ),
        migrations.AddIndex(
            model_name="matchseat",
            index=models.Index(fields=["bot", "-match"], name="matchseat_bot_match_idx"),
        ),
        migrations.AlterField(
            model_name="matchseat",
            name="bot",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="seats", to="bots.bot"),
        ),
        migrations.AddIndex(
            model_name="matchseat",
            index=models.Index(condition=models.Q(("result__isnull", False)), fields=["bot", "-result"], name="matchseat_bot_result_idx"),
        ),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(fields=["status", "-id"], name="match_status_idx"),
        ),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(fields=["ladder", "-id"], name="match_ladder_idx"),
        ),
        migrations.AddIndex(
            model_name="match",
            index=models.Index(fields=["tournament", "-id"], name="match_tournament_idx"),
        ),
        migrations.AddConstraint(
            model_name="match",
            constraint=models.CheckConstraint(condition=models.Q(("rated", False), models.Q(("ladder", ""), _negated=True), _connector="OR"), name="match_rated_has_ladder"),
        ),
    ]
