"""``BotRating`` moves here from ``ladder.bots``: Django's state only, the table stays.

The table keeps its name (``bots_botrating``), its rows, index and constraint;
``bots.0006`` drops the model from the bots app's state after this one adds it
here. The content type is relabelled so admin permissions follow the model.
"""

import django.db.models.deletion
from django.db import migrations, models

import ladder.ratings.models


def relabel(apps, schema_editor, old="bots", new="ratings"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label=old, model="botrating").update(app_label=new)


def relabel_back(apps, schema_editor):
    relabel(apps, schema_editor, old="ratings", new="bots")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("bots", "0005_bot_suspension"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="BotRating",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("ladder", models.CharField(help_text="Key of the ladder (settings).", max_length=32)),
                        ("rating", models.IntegerField(default=ladder.ratings.models.start_rating, help_text="Hundredths of an Elo point.")),
                        ("games", models.PositiveIntegerField(default=0, help_text="Rated games on this ladder.")),
                        ("wins", models.PositiveIntegerField(default=0, help_text="Rated games ranked first.")),
                        ("bot", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="ratings", to="bots.bot")),
                    ],
                    options={
                        "db_table": "bots_botrating",
                        "ordering": ["ladder", "-rating", "bot"],
                        "indexes": [models.Index(fields=["ladder", "-rating", "bot"], name="botrating_board_idx")],
                        "constraints": [models.UniqueConstraint(fields=("ladder", "bot"), name="botrating_ladder_bot_unique")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(relabel, relabel_back),
    ]
