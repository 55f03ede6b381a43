"""Bots that speak the `digdown.v1.Bot` gRPC protocol, and the SDK to write them (bots/sdk.py)."""

from .sdk import Context, serve

__all__ = ["Context", "serve"]
