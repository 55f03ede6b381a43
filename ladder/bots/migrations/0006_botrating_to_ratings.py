"""``BotRating`` leaves the bots app's state (``ratings.0001`` took it over); the table stays."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0005_bot_suspension"),
        ("ratings", "0001_botrating_from_bots"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="BotRating")],
            database_operations=[],
        ),
    ]
