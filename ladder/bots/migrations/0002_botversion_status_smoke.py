from django.db import migrations, models


class Migration(migrations.Migration):
    """Versions stored before smoke matches existed were all valid (as the API said)."""

    dependencies = [("bots", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="status",
            field=models.CharField(
                choices=[("pending", "Pending"), ("valid", "Valid"), ("invalid", "Invalid")],
                db_index=True,
                default="valid",
                max_length=8,
            ),
        ),
        migrations.AlterField(
            model_name="botversion",
            name="status",
            field=models.CharField(
                choices=[("pending", "Pending"), ("valid", "Valid"), ("invalid", "Invalid")],
                db_index=True,
                default="pending",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="botversion",
            name="smoke_outcome",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="botversion",
            name="smoke_log",
            field=models.FileField(blank=True, max_length=255, upload_to="logs/"),
        ),
        migrations.AddField(
            model_name="botversion",
            name="smoke_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
