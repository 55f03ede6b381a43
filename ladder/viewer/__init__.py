"""The replay viewer: per-step timelines of replays, and the pages that show them."""
