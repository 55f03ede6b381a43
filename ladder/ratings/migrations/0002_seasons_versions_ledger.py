"""Seasons, version entries and the ledger of rating changes; sigma and score on entries.

Every rating recorded so far is Elo: each ladder with entries gets its first
season rating with ``elo`` (switching it is ``rerate --ladder KEY --system NAME``,
a recompute). The entries get Elo's sigma (from their games) and the
conservative score; the ledger is filled from the recorded seats, in recording
order, with Elo's sigma before and after each rated game.
"""

import itertools
import math

import django.db.models.deletion
import ladder.ratings.models
from django.db import migrations, models


SE_PER_GAME = 400.0 / math.log(10) / 0.5


def elo_sigma(games):
    return round(SE_PER_GAME / math.sqrt(max(games, 1)) * 100)


def forward(apps, schema_editor):
    from django.conf import settings
    from django.utils import timezone

    BotRating = apps.get_model("ratings", "BotRating")
    Season = apps.get_model("ratings", "Season")
    RatingChange = apps.get_model("ratings", "RatingChange")
    VersionRating = apps.get_model("ratings", "VersionRating")
    MatchSeat = apps.get_model("matches", "MatchSeat")
    k = settings.LADDER_RATING_K_SIGMA
    now = timezone.now()
    keys = sorted(set(BotRating.objects.values_list("ladder", flat=True)))
    Season.objects.bulk_create(
        [Season(ladder=key, number=1, system="elo", started_at=now) for key in keys]
    )
    pending = []
    for entry in BotRating.objects.all().iterator(chunk_size=2000):
        entry.sigma = elo_sigma(entry.games)
        entry.score = entry.rating - round(k * entry.sigma)
        pending.append(entry)
        if len(pending) >= 1000:
            BotRating.objects.bulk_update(pending, ["sigma", "score"])
            pending.clear()
    BotRating.objects.bulk_update(pending, ["sigma", "score"])
    rows = (
        MatchSeat.objects.filter(result__isnull=False)
        .exclude(match__ladder="")
        .order_by("result_id", "seat")
        .values_list(
            "result_id", "match_id", "seat", "bot_id", "version_id", "rank", "rating_before",
            "rating_after", "result__elo_k", "result__recorded_at", "match__ladder",
        )
        .iterator(chunk_size=5000)
    )
    games = {}  # (ladder, bot) -> rated games so far
    versions = {}  # (ladder, version) -> [bot, rating, games, wins]
    batch = []
    for _, group in itertools.groupby(rows, key=lambda r: r[0]):
        seats = list(group)
        version_after = _rate_versions(versions, seats)
        for rid, mid, seat, bot, version, rank, before, after, elo_k, at, ladder in seats:
            n = games.get((ladder, bot), 0)
            rated = bool(elo_k) and elo_k > 0 and len(seats) >= 2
            games[(ladder, bot)] = n + rated
            batch.append(
                RatingChange(
                    ladder=ladder, season=1, result_id=rid, match_id=mid, seat=seat,
                    bot_id=bot, version_id=version, rank=rank or 0, rated=rated,
                    rating_before=before or 0, sigma_before=elo_sigma(n),
                    rating_after=after or 0, sigma_after=elo_sigma(n + rated),
                    version_rating_after=version_after.get(version), recorded_at=at,
                )
            )
        if len(batch) >= 2000:
            RatingChange.objects.bulk_create(batch)
            batch.clear()
    RatingChange.objects.bulk_create(batch)
    VersionRating.objects.bulk_create(
        [
            VersionRating(
                ladder=ladder, version_id=vid, bot_id=bot, rating=rating,
                sigma=elo_sigma(g), games=g, wins=w,
            )
            for (ladder, vid), (bot, rating, g, w) in versions.items()
        ],
        batch_size=1000,
    )


def _rate_versions(versions, seats):
    """Elo over the seated versions, as the recording now does: a version's entry is
    seeded from its bot's previous version's rating. Returns version -> rating after."""
    from django.conf import settings

    from ladder.common import elo

    elo_k, ladder = seats[0][8], seats[0][10]
    if not (elo_k and elo_k > 0 and len(seats) >= 2) or any(r[4] is None for r in seats):
        return {}
    now = []
    for r in seats:
        bot, vid = r[3], r[4]
        if (ladder, vid) not in versions:
            earlier = [
                v for (lad, v), e in versions.items() if lad == ladder and e[0] == bot and v < vid
            ]
            start = settings.LADDER_ELO_START
            rating = versions[(ladder, max(earlier))][1] if earlier else start
            versions[(ladder, vid)] = [bot, rating, 0, 0]
        now.append(versions[(ladder, vid)])
    deltas = elo.rate([e[1] for e in now], [r[5] or 0 for r in seats], elo_k)
    out = {}
    for r, e, d in zip(seats, now, deltas):
        e[1] += d
        e[2] += 1
        e[3] += r[5] == 1
        out[r[4]] = e[1]
    return out


class Migration(migrations.Migration):

    dependencies = [
        ('bots', '0006_botrating_to_ratings'),
        ('ratings', '0001_botrating_from_bots'),
        ('matches', '0005_deals_tournaments_comparisons'),
    ]

    operations = [
        migrations.CreateModel(
            name='RatingChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ladder', models.CharField(max_length=32)),
                ('season', models.PositiveIntegerField()),
                ('result_id', models.BigIntegerField(help_text='Recording order.')),
                ('match_id', models.BigIntegerField()),
                ('seat', models.PositiveSmallIntegerField()),
                ('rank', models.PositiveSmallIntegerField()),
                ('rated', models.BooleanField()),
                ('rating_before', models.IntegerField()),
                ('sigma_before', models.IntegerField()),
                ('rating_after', models.IntegerField()),
                ('sigma_after', models.IntegerField()),
                ('version_rating_after', models.IntegerField(null=True)),
                ('recorded_at', models.DateTimeField()),
            ],
        ),
        migrations.CreateModel(
            name='Season',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ladder', models.CharField(max_length=32)),
                ('number', models.PositiveIntegerField()),
                ('system', models.CharField(help_text='Key in ladder.ratings.systems.', max_length=24)),
                ('after_result', models.BigIntegerField(default=0, help_text='Its results are those recorded after this result id.')),
                ('started_at', models.DateTimeField()),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
                ('shrink', models.FloatField(default=1.0, help_text='Soft reset at its start: kept share.')),
                ('widen', models.IntegerField(default=0, help_text='Soft reset: sigma added in quadrature.')),
            ],
            options={
                'ordering': ['ladder', 'number'],
            },
        ),
        migrations.CreateModel(
            name='SeasonStanding',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('rating', models.IntegerField()),
                ('sigma', models.IntegerField()),
                ('score', models.IntegerField()),
                ('games', models.PositiveIntegerField()),
                ('wins', models.PositiveIntegerField()),
                ('official_rating', models.IntegerField(help_text='Batch ML Plackett-Luce, Elo scale.')),
                ('official_sigma', models.IntegerField()),
                ('official_position', models.PositiveIntegerField()),
            ],
            options={
                'ordering': ['season', 'official_position'],
            },
        ),
        migrations.CreateModel(
            name='VersionRating',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ladder', models.CharField(max_length=32)),
                ('rating', models.IntegerField(help_text='Mean (mu), hundredths.')),
                ('sigma', models.IntegerField(help_text='Uncertainty (sigma), hundredths.')),
                ('games', models.PositiveIntegerField(default=0)),
                ('wins', models.PositiveIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name='botrating',
            name='score',
            field=models.IntegerField(default=0, help_text='rating - k * sigma, what the board ranks by.'),
        ),
        migrations.AddField(
            model_name='botrating',
            name='sigma',
            field=models.IntegerField(default=0, help_text='Uncertainty (sigma), hundredths.'),
        ),
        migrations.AlterField(
            model_name='botrating',
            name='games',
            field=models.PositiveIntegerField(default=0, help_text='Rated games this season.'),
        ),
        migrations.AlterField(
            model_name='botrating',
            name='rating',
            field=models.IntegerField(default=ladder.ratings.models.start_rating, help_text='Mean (mu), hundredths.'),
        ),
        migrations.AddIndex(
            model_name='botrating',
            index=models.Index(fields=['ladder', '-score', 'bot'], name='botrating_score_idx'),
        ),
        migrations.AddField(
            model_name='ratingchange',
            name='bot',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rating_changes', to='bots.bot'),
        ),
        migrations.AddField(
            model_name='ratingchange',
            name='version',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='bots.botversion'),
        ),
        migrations.AddConstraint(
            model_name='season',
            constraint=models.UniqueConstraint(fields=('ladder', 'number'), name='season_ladder_number_unique'),
        ),
        migrations.AddField(
            model_name='seasonstanding',
            name='bot',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='season_standings', to='bots.bot'),
        ),
        migrations.AddField(
            model_name='seasonstanding',
            name='season',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='standings', to='ratings.season'),
        ),
        migrations.AddField(
            model_name='versionrating',
            name='bot',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='version_ratings', to='bots.bot'),
        ),
        migrations.AddField(
            model_name='versionrating',
            name='version',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='ratings', to='bots.botversion'),
        ),
        migrations.AddIndex(
            model_name='ratingchange',
            index=models.Index(fields=['bot', 'ladder', '-result_id'], name='ratingchange_bot_idx'),
        ),
        migrations.AddIndex(
            model_name='ratingchange',
            index=models.Index(fields=['ladder', 'result_id'], name='ratingchange_ladder_idx'),
        ),
        migrations.AddConstraint(
            model_name='ratingchange',
            constraint=models.UniqueConstraint(fields=('result_id', 'seat'), name='ratingchange_seat_unique'),
        ),
        migrations.AddConstraint(
            model_name='seasonstanding',
            constraint=models.UniqueConstraint(fields=('season', 'bot'), name='seasonstanding_unique'),
        ),
        migrations.AddIndex(
            model_name='versionrating',
            index=models.Index(fields=['bot', 'ladder'], name='versionrating_bot_idx'),
        ),
        migrations.AddConstraint(
            model_name='versionrating',
            constraint=models.UniqueConstraint(fields=('ladder', 'version'), name='versionrating_ladder_version_unique'),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
    ]
