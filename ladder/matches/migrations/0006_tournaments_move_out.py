"""Tournaments, byes, comparisons and deals now belong to the tournaments app.

State only (``tournaments.0001`` took the models over with their tables): the
old models leave this app's state and ``Match.tournament`` / ``Match.deal``
point at the tournaments app's models, which use the same tables, so the
database is not touched. The content types follow the models, so permissions
and admin history granted on them are kept.
"""

import django.db.models.deletion
from django.db import migrations, models

MOVED = ["tournament", "tournamentbye", "versioncomparison", "deal"]


def _relabel(apps, schema_editor, old, new):
    content_types = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not content_types.objects.filter(app_label=new, model=model).exists():
            content_types.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, schema_editor, "matches", "tournaments")


def backwards(apps, schema_editor):
    _relabel(apps, schema_editor, "tournaments", "matches")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('matches', '0005_deals_tournaments_comparisons'),
        ('tournaments', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.RemoveField(
                    model_name='deal',
                    name='comparison',
                ),
                migrations.RemoveField(
                    model_name='deal',
                    name='tournament',
                ),
                migrations.AlterField(
                    model_name='match',
                    name='deal',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='matches', to='tournaments.deal'),
                ),
                migrations.RemoveField(
                    model_name='tournament',
                    name='created_by',
                ),
                migrations.RemoveField(
                    model_name='tournament',
                    name='participants',
                ),
                migrations.RemoveField(
                    model_name='tournamentbye',
                    name='tournament',
                ),
                migrations.AlterField(
                    model_name='match',
                    name='tournament',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='matches', to='tournaments.tournament'),
                ),
                migrations.RemoveField(
                    model_name='tournamentbye',
                    name='bot',
                ),
                migrations.RemoveField(
                    model_name='versioncomparison',
                    name='bot',
                ),
                migrations.RemoveField(
                    model_name='versioncomparison',
                    name='new_version',
                ),
                migrations.RemoveField(
                    model_name='versioncomparison',
                    name='old_version',
                ),
                migrations.RemoveField(
                    model_name='versioncomparison',
                    name='opponents',
                ),
                migrations.RemoveField(
                    model_name='versioncomparison',
                    name='requested_by',
                ),
                migrations.DeleteModel(
                    name='Deal',
                ),
                migrations.DeleteModel(
                    name='Tournament',
                ),
                migrations.DeleteModel(
                    name='TournamentBye',
                ),
                migrations.DeleteModel(
                    name='VersionComparison',
                ),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
