"""Forms of the site: they check the shape of input; the services decide the rest."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm

from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.ladders import ladder_default, ladder_list
from ladder.ratings.selectors import LEADERBOARD_SORTS

PAGE_SIZES = (10, 25, 50, 100, 200)


class LeaderboardFilter(forms.Form):
    """Search, kind, sort and page size of the leaderboard (a GET form; bad values fall back).

    The ladder (``?ladder=``) is read by the page itself: an unknown one is a 404, as
    in the REST API, not a silent fall back to the default.
    """

    q = forms.CharField(label="Bot or owner", required=False, max_length=64)
    kind = forms.ChoiceField(
        label="Bots",
        required=False,
        choices=[
            ("", "every kind"),
            (Bot.Kind.HOSTED, "hosted only"),
            (Bot.Kind.REMOTE, "remote only"),
            (Bot.Kind.CONNECTED, "connected only"),
        ],
    )
    sort = forms.ChoiceField(
        required=False, choices=[(k, k) for k in LEADERBOARD_SORTS], widget=forms.HiddenInput
    )
    page_size = forms.TypedChoiceField(
        label="Per page",
        required=False,
        coerce=int,
        empty_value=50,  # type: ignore[arg-type]  # django-stubs expects str | None
        choices=[(n, str(n)) for n in PAGE_SIZES],
    )

    def values(self) -> dict[str, Any]:
        """The cleaned filters, or the defaults for whatever did not validate."""
        defaults: dict[str, Any] = {"q": "", "kind": "", "sort": "rank", "page_size": 50}
        self.is_valid()  # cleaned_data keeps the fields that validated
        return {k: self.cleaned_data.get(k) or v for k, v in defaults.items()}


class BotCreateForm(forms.Form):
    name = forms.CharField(
        max_length=32, help_text="3-32 characters: letters, digits, '_', '.', '-'."
    )
    kind = forms.ChoiceField(choices=Bot.Kind.choices, widget=forms.RadioSelect)
    description = forms.CharField(
        max_length=500, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    endpoint = forms.CharField(
        max_length=300,
        required=False,
        help_text="Remote bots: host:port of your Bot gRPC service (you can set it later).",
    )


class UploadForm(forms.Form):
    file = forms.FileField(
        label="Source (.py or .zip)",
        help_text=f"At most {settings.LADDER_UPLOAD_MAX_BYTES // 1024} KiB; "
        "entry point bot.py, main.py or __main__.py unless named below.",
    )
    entry_point = forms.CharField(max_length=255, required=False, label="Entry point (optional)")


class EndpointForm(forms.Form):
    endpoint = forms.CharField(max_length=300, help_text="host:port, or [IPv6]:port")


class ChallengeForm(forms.Form):
    opponents = forms.CharField(
        max_length=200,
        help_text="1 to 3 bot names, separated by commas.",
    )
    ladder = forms.ChoiceField(
        required=False,
        help_text="Its ruleset and difficulty, and whose ratings the match changes.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Ladders are settings, read when the form is made (overridable in tests).
        field: forms.ChoiceField = self.fields["ladder"]  # type: ignore[assignment]
        field.choices = [(lad.key, lad.describe()) for lad in ladder_list()]
        field.initial = ladder_default().key

    def clean_opponents(self) -> list[str]:
        names = [n.strip() for n in self.cleaned_data["opponents"].split(",") if n.strip()]
        if not 1 <= len(names) <= 3:
            raise forms.ValidationError("name 1 to 3 opponents")
        return names


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=64, required=False, help_text="What this token is for.")


class SignUpForm(UserCreationForm):
    """Username, optional email, password twice: Django's own checks and password validators.

    Only validation: the account is made by ``accounts.services.user_signup``.
    """

    email = forms.EmailField(
        required=False, help_text="Optional; only for resetting a forgotten password."
    )

    class Meta(UserCreationForm.Meta):  # type: ignore[name-defined]
        model = User
        fields = ("username", "email")


class ComparisonForm(forms.Form):
    """Two valid versions of the bot, the opponents and the number of deals."""

    old_version = forms.TypedChoiceField(coerce=int, label="Old version")
    new_version = forms.TypedChoiceField(coerce=int, label="New version")
    opponents = forms.CharField(
        max_length=200,
        initial="heuristic",
        help_text="1 to 3 bot names, separated by commas: every deal is played against them.",
    )
    deals = forms.IntegerField(
        min_value=2,
        initial=10,
        help_text="Each deal (one cave) is played by both versions in every seat rotation.",
    )

    def __init__(self, *args: Any, versions: list[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [(n, f"v{n}") for n in sorted(versions, reverse=True)]
        for name in ("old_version", "new_version"):
            field: forms.TypedChoiceField = self.fields[name]  # type: ignore[assignment]
            field.choices = choices
        if len(choices) >= 2:
            self.fields["new_version"].initial = choices[0][0]
            self.fields["old_version"].initial = choices[1][0]
        deals: forms.IntegerField = self.fields["deals"]  # type: ignore[assignment]
        deals.widget.attrs["max"] = settings.LADDER_COMPARISON_MAX_DEALS

    def clean_opponents(self) -> list[str]:
        names = [n.strip() for n in self.cleaned_data["opponents"].split(",") if n.strip()]
        if not 1 <= len(names) <= 3:
            raise forms.ValidationError("name 1 to 3 opponents")
        return names
