from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="LimitCounter",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "key",
                    models.CharField(
                        help_text="limit name and a digest of whom it counts", max_length=128
                    ),
                ),
                (
                    "window",
                    models.BigIntegerField(help_text="window number: unix time // period"),
                ),
                ("count", models.PositiveIntegerField(default=0)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("key", "window"), name="limit_counter_key_window"
                    )
                ],
            },
        ),
    ]
