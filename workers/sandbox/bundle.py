"""A hosted bot's code: an uploaded ``.py`` file or ``.zip`` archive, unpacked for one seat.

The ladder validated the upload when it was stored; unpacking checks again what
could hurt the worker itself (paths leaving the directory, links, sizes), since
what comes back from storage is not trusted more than what went in.
"""

from __future__ import annotations

import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_UNPACKED_BYTES = 64 * 1024 * 1024
MAX_FILES = 1000
CHUNK = 64 * 1024


class BundleError(ValueError):
    """The archive cannot be unpacked safely (its owner's problem, not the worker's)."""


@dataclass(frozen=True)
class Bundle:
    """An upload as stored: its file name (``.py`` or ``.zip``), bytes and entry point."""

    filename: str
    data: bytes
    entry_point: str = ""

    @property
    def is_zip(self) -> bool:
        return self.data[:4] in (b"PK\x03\x04", b"PK\x05\x06")

    def entry(self) -> str:
        """The script to run, relative to the unpacked directory."""
        if not self.is_zip:
            return _safe_name(PurePosixPath(self.filename.replace("\\", "/")).name or "bot.py")
        if not self.entry_point:
            raise BundleError("the archive has no entry point")
        return _safe_name(self.entry_point)

    def unpack(self, dest: Path, *, max_bytes: int = MAX_UNPACKED_BYTES) -> str:
        """Write the bot's files under ``dest`` (dirs 0755, files 0644); returns the entry."""
        entry = self.entry()
        if not self.is_zip:
            _write(dest / entry, self.data)
            return entry
        total = 0
        try:
            with zipfile.ZipFile(io.BytesIO(self.data)) as zf:
                infos = zf.infolist()
                if len(infos) > MAX_FILES:
                    raise BundleError(f"the archive has more than {MAX_FILES} entries")
                for info in infos:
                    name = _safe_name(info.filename.rstrip("/"))
                    if info.is_dir():
                        (dest / name).mkdir(mode=0o755, parents=True, exist_ok=True)
                        continue
                    kind = (info.external_attr >> 16) & 0o170000
                    if kind not in (0, 0o100000):
                        raise BundleError(f"{name}: not a regular file")
                    buf = bytearray()
                    with zf.open(info) as member:
                        while chunk := member.read(CHUNK):
                            total += len(chunk)
                            if total > max_bytes:
                                raise BundleError(f"the archive unpacks to more than {max_bytes} B")
                            buf += chunk
                    _write(dest / name, bytes(buf))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
            raise BundleError(f"the archive cannot be read: {exc}") from None
        if not (dest / entry).is_file():
            raise BundleError(f"the entry point {entry} is not in the archive")
        return entry


def _safe_name(name: str) -> str:
    p = PurePosixPath(name)
    if (
        not name
        or "\x00" in name
        or "\\" in name
        or p.is_absolute()
        or any(part in ("..", "") for part in p.parts)
        or len(p.parts) > 16
    ):
        raise BundleError(f"unsafe path in the archive: {name!r}")
    return str(p)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
