"""URLs of the tokens API (under /api/v1/)."""

from django.urls import path

from ladder.accounts import apis

urlpatterns = [
    path("tokens/", apis.TokenListApi.as_view(), name="token-list"),
    path("tokens/<id:token_id>/", apis.TokenRevokeApi.as_view(), name="token-revoke"),
]
