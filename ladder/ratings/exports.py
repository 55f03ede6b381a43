"""The ladder's games as a data set: finished, revealed matches streamed as JSON Lines or Parquet.

One filter (``ExportFilter``: ladder, season, finish-date range, rating range,
bot, a cap on matches) serves ``manage.py export_games`` and the REST export.
Only matches whose deal is revealed are ever read
(``ladder.matches.selectors.matches_revealed``: finished, no open match deals
from the same seed), so no hidden card of a deal still in play leaves the
ladder. Bot addresses are already masked in the ladder's stored replays.

Streaming, in bounded memory: matches are read by primary key in pages of
``PAGE`` (one query for the page's seats), each replay is read from storage,
written and dropped; Parquet rows (one per decision, ``engine.training.dataset``)
are written in row groups of ``ROW_GROUP`` rows through a sink that hands the
bytes on as they are produced. Memory grows with a page and a row group, never
with the export.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models import Exists, OuterRef, QuerySet

from ladder.common.exceptions import ApplicationError
from ladder.ladders import ladder_get
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import matches_revealed
from ladder.ratings.models import Season

PAGE = 200
ROW_GROUP = 4096
FORMATS = ("jsonl", "parquet")


@dataclass(frozen=True)
class ExportFilter:
    """Which matches an export holds (every field optional but the ladder's default)."""

    ladder: str = ""
    season: int | None = None
    since: datetime | None = None
    until: datetime | None = None
    min_rating: int | None = None  # hundredths: every seat rated at least this before
    max_rating: int | None = None  # hundredths: every seat rated at most this before
    bot_id: int | None = None
    limit: int | None = None


def export_queryset(f: ExportFilter) -> QuerySet[Match]:
    """The exported matches, oldest first (by id)."""
    key = ladder_get(f.ladder or None).key
    qs = matches_revealed(
        Match.objects.filter(ladder=key, status=Match.Status.FINISHED, replay_sha256__gt="")
    )
    if f.season is not None:
        seasons = list(Season.objects.filter(ladder=key).order_by("number"))
        season = next((s for s in seasons if s.number == f.season), None)
        if season is None:
            raise ApplicationError(f"ladder {key} has no season {f.season}")
        qs = qs.filter(result__id__gt=season.after_result)
        later = next((s for s in seasons if s.number == f.season + 1), None)
        if later is not None:
            qs = qs.filter(result__id__lte=later.after_result)
    if f.since is not None:
        qs = qs.filter(finished_at__gte=f.since)
    if f.until is not None:
        qs = qs.filter(finished_at__lt=f.until)
    seats = MatchSeat.objects.filter(match=OuterRef("pk"))
    if f.min_rating is not None:
        qs = qs.filter(~Exists(seats.filter(rating_before__lt=f.min_rating)))
    if f.max_rating is not None:
        qs = qs.filter(~Exists(seats.filter(rating_before__gt=f.max_rating)))
    if f.bot_id is not None:
        qs = qs.filter(Exists(seats.filter(bot_id=f.bot_id)))
    return qs.order_by("pk")


class ExportSeat(TypedDict):
    seat: int
    bot: str
    version: int
    rank: int | None
    rating_before: float | None  # on the Elo scale
    rating_after: float | None


class ExportLine(TypedDict):
    """One exported match: a JSON Lines line (what engine.training.dataset reads)."""

    match: int
    ladder: str
    seed: int
    finished_at: str | None
    seats: list[ExportSeat]
    replay: dict[str, Any]  # the whole replay document (docs/replay-format.md)


def _replay(name: str) -> dict[str, Any]:
    with default_storage.open(name, "rb") as fh:
        raw = fh.read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    return dict(json.loads(data))


def export_lines(f: ExportFilter) -> Iterator[ExportLine]:
    """One dict per exported match: its seats (bot, version, rank, rating before/after)
    and its whole replay document; read page by page."""
    qs = export_queryset(f)
    last = 0
    left = f.limit
    key = ladder_get(f.ladder or None).key
    while left is None or left > 0:
        size = PAGE if left is None else min(PAGE, left)
        page = list(
            qs.filter(pk__gt=last).values_list("pk", "replay", "finished_at", "seed")[:size]
        )
        if not page:
            return
        seats: dict[int, list[ExportSeat]] = {}
        rows = (
            MatchSeat.objects.filter(match_id__in=[p[0] for p in page])
            .order_by("match_id", "seat")
            .values_list(
                "match_id", "seat", "bot__name", "version__number", "rank", "rating_before",
                "rating_after",
            )
        )  # fmt: skip
        for mid, seat, bot, version, rank, before, after in rows:
            seats.setdefault(mid, []).append(
                {
                    "seat": seat, "bot": bot, "version": version, "rank": rank,
                    "rating_before": None if before is None else before / 100,
                    "rating_after": None if after is None else after / 100,
                }
            )  # fmt: skip
        for mid, name, finished, seed in page:
            yield {
                "match": mid,
                "ladder": key,
                "seed": seed,
                "finished_at": finished.isoformat() if finished else None,
                "seats": seats.get(mid, []),
                "replay": _replay(name),
            }
        last = page[-1][0]
        if left is not None:
            left -= len(page)


def jsonl_chunks(f: ExportFilter) -> Iterator[bytes]:
    """The export as JSON Lines, one match (with its replay) per line."""
    for line in export_lines(f):
        yield json.dumps(line, separators=(",", ":")).encode() + b"\n"


class _Sink:
    """A write-only file for pyarrow whose bytes are taken out as they are written."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: Any) -> int:
        b = bytes(data)
        self.parts.append(b)
        self.position += len(b)
        return len(b)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        return out


def parquet_schema() -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    return pa.schema(
        [
            ("match", pa.int64()),
            ("ladder", pa.string()),
            ("ruleset", pa.string()),
            ("num_seats", pa.int8()),
            ("seat", pa.int8()),
            ("bot", pa.string()),
            ("turn", pa.int32()),
            ("observation", pa.list_(pa.float32())),
            ("legal", pa.list_(pa.int16())),
            ("action", pa.int16()),
            ("rank", pa.int8()),
        ]
    )


def parquet_available() -> bool:
    try:
        import pyarrow
        import pyarrow.parquet  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


def parquet_chunks(f: ExportFilter) -> Iterator[bytes]:
    """The export as Parquet: one row per decision (``engine.training.dataset``)."""
    if not parquet_available():
        raise ApplicationError("Parquet exports need pyarrow (the project's 'export' extra)")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.training.dataset import decision_rows

    schema = parquet_schema()
    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")
    rows: list[dict[str, Any]] = []
    for line in export_lines(f):
        rows.extend(decision_rows(line))
        if len(rows) >= ROW_GROUP:
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            rows.clear()
            yield sink.take()
    if rows:
        writer.write_table(pa.Table.from_pylist(rows, schema=schema))
    writer.close()
    yield sink.take()


def export_chunks(f: ExportFilter, fmt: str) -> Iterator[bytes]:
    if fmt not in FORMATS:
        raise ApplicationError(f"format must be one of {', '.join(FORMATS)}")
    return jsonl_chunks(f) if fmt == "jsonl" else parquet_chunks(f)


def export_max_matches() -> int:
    """The most matches one REST export holds (``LADDER_EXPORT_MAX_MATCHES``)."""
    return int(settings.LADDER_EXPORT_MAX_MATCHES)


__all__ = ["FORMATS", "ExportFilter", "export_chunks", "export_queryset"]
