"""Ratings per ladder: ``Bot.rating``/``games`` move to one ``BotRating`` per (bot, ladder).

Every rating recorded so far was on the one ladder there was, so it moves to the
``dd-1`` ladder's entry (every rated match before ladders was a dd-1 game), with
its wins counted once from the seats. ``Bot.current_version`` is filled with
each bot's newest valid version. Reversible: going back copies the dd-1 ladder's
entries onto the bots.
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, OuterRef, Q, Subquery

import ladder.bots.models

# Every match before ladders existed was a dd-1 game: its ratings belong on the dd-1 ladder,
# whatever the default ladder is when this runs.
PRE_LADDER_KEY = "dd-1"


def forward(apps, schema_editor):
    Bot = apps.get_model("bots", "Bot")
    BotRating = apps.get_model("bots", "BotRating")
    BotVersion = apps.get_model("bots", "BotVersion")
    key = PRE_LADDER_KEY
    won = Q(seats__rank=1, seats__match__status="finished", seats__match__rated=True)
    rows = Bot.objects.annotate(won=Count("seats", filter=won)).values_list(
        "pk", "rating", "games", "won"
    )
    BotRating.objects.bulk_create(
        (BotRating(bot_id=pk, ladder=key, rating=r, games=g, wins=w) for pk, r, g, w in rows),
        batch_size=1000,
    )
    latest = (
        BotVersion.objects.filter(bot=OuterRef("pk"), status="valid")
        .order_by("-number")
        .values("pk")[:1]
    )
    Bot.objects.update(current_version=Subquery(latest))


def backward(apps, schema_editor):
    Bot = apps.get_model("bots", "Bot")
    BotRating = apps.get_model("bots", "BotRating")
    entry = BotRating.objects.filter(bot=OuterRef("pk"), ladder=PRE_LADDER_KEY)
    Bot.objects.filter(ratings__ladder=PRE_LADDER_KEY).update(
        rating=Subquery(entry.values("rating")[:1]), games=Subquery(entry.values("games")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0003_botversion_smoke_sent_at"),
        ("matches", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="BotRating",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("ladder", models.CharField(help_text="Key of the ladder (settings).", max_length=32)),
                ("rating", models.IntegerField(default=ladder.bots.models._start_rating, help_text="Hundredths of an Elo point.")),
                ("games", models.PositiveIntegerField(default=0, help_text="Rated games on this ladder.")),
                ("wins", models.PositiveIntegerField(default=0, help_text="Rated games ranked first.")),
                ("bot", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ratings", to="bots.bot")),
            ],
            options={"ordering": ["ladder", "-rating", "bot"]},
        ),
        migrations.AddField(
            model_name="bot",
            name="current_version",
            field=models.ForeignKey(blank=True, help_text="The version new matches play (the newest valid); set by the version services.", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="bots.botversion"),
        ),
        migrations.RunPython(forward, backward),
        migrations.RemoveIndex(model_name="bot", name="bot_rating_idx"),
        migrations.RemoveField(model_name="bot", name="games"),
        migrations.RemoveField(model_name="bot", name="rating"),
        migrations.AddIndex(
            model_name="botrating",
            index=models.Index(fields=["ladder", "-rating", "bot"], name="botrating_board_idx"),
        ),
        migrations.AddConstraint(
            model_name="botrating",
            constraint=models.UniqueConstraint(fields=("ladder", "bot"), name="botrating_ladder_bot_unique"),
        ),
    ]
