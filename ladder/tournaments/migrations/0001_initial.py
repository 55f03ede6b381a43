"""The tournaments app takes over the tournament, bye, comparison and deal models.

They were created by the matches app (``matches.0001``-``0005``). Their tables
keep their names (``db_table``), so this migration changes the migration state
only: no table is created, renamed or copied, and every row stays where it is
(``matches.0006`` drops the old models from the state and repoints
``Match.tournament`` and ``Match.deal``).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('bots', '0005_bot_suspension'),
        ('matches', '0005_deals_tournaments_comparisons'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Tournament',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('format', models.CharField(choices=[('round_robin', 'round robin'), ('swiss', 'swiss')], default='round_robin', max_length=16)),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('finished', 'Finished')], default='pending', max_length=10)),
                        ('rated', models.BooleanField(default=False, help_text='Whether its matches change ladder ratings (default: no).')),
                        ('seats', models.PositiveSmallIntegerField(default=2, help_text='Seats per match (Swiss: 2 only).')),
                        ('duplicate', models.BooleanField(default=False, help_text='Play each table as a duplicate deal: one seed, every seat rotation.')),
                        ('rounds', models.PositiveSmallIntegerField(blank=True, help_text='Swiss: rounds to play (default: ceil(log2 n)).', null=True)),
                        ('ladder', models.CharField(blank=True, help_text='Ladder key whose game it plays (default: default).', max_length=32)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('participants', models.ManyToManyField(blank=True, db_table='matches_tournament_participants', related_name='tournaments', to='bots.bot')),
                    ],
                    options={
                        'db_table': 'matches_tournament',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='VersionComparison',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('deals', models.PositiveSmallIntegerField()),
                        ('ladder', models.CharField(blank=True, max_length=32)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('bot', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='comparisons', to='bots.bot')),
                        ('new_version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='bots.botversion')),
                        ('old_version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='bots.botversion')),
                        ('opponents', models.ManyToManyField(db_table='matches_versioncomparison_opponents', related_name='+', to='bots.bot')),
                        ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'matches_versioncomparison',
                        'ordering': ['-id'],
                    },
                ),
                migrations.CreateModel(
                    name='TournamentBye',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('round', models.PositiveSmallIntegerField()),
                        ('bot', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='bots.bot')),
                        ('tournament', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='byes', to='tournaments.tournament')),
                    ],
                    options={
                        'db_table': 'matches_tournamentbye',
                        'ordering': ['tournament', 'round'],
                        'constraints': [models.UniqueConstraint(fields=('tournament', 'round'), name='tournamentbye_one_per_round')],
                    },
                ),
                migrations.CreateModel(
                    name='Deal',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('seed', models.BigIntegerField()),
                        ('seats', models.PositiveSmallIntegerField(help_text='Table size = number of rotations.')),
                        ('comparison_index', models.PositiveSmallIntegerField(blank=True, null=True)),
                        ('comparison_side', models.CharField(blank=True, choices=[('old', 'Old'), ('new', 'New')], max_length=3)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('tournament', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='deals', to='tournaments.tournament')),
                        ('comparison', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='deal_set', to='tournaments.versioncomparison')),
                    ],
                    options={
                        'db_table': 'matches_deal',
                        'ordering': ['id'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('seed__gte', 0)), name='deal_seed_nonnegative'), models.UniqueConstraint(condition=models.Q(('comparison__isnull', False)), fields=('comparison', 'comparison_index', 'comparison_side'), name='deal_comparison_unique')],
                    },
                ),
            ],
        ),
    ]
