from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("matches", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="matchseat",
            name="log",
            field=models.FileField(blank=True, max_length=255, upload_to="logs/"),
        ),
        migrations.AddField(
            model_name="matchseat",
            name="log_size",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
