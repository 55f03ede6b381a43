"""Validation of uploaded hosted-bot source: one ``.py`` file or a ``.zip``.

Nothing here extracts to disk: the archive is read in memory and every member is
stream-decompressed with a running byte counter, because the sizes declared in a
zip header are attacker-controlled (pitfalls S7). The report lists every problem
found so the author can fix them in one go.
"""

from __future__ import annotations

import io
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings

CHUNK = 64 * 1024
DEFAULT_ENTRY_POINTS = ("bot.py", "main.py", "__main__.py")
NESTED_SUFFIXES = (
    ".zip", ".whl", ".egg", ".jar", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar",
)  # fmt: skip
NESTED_MAGIC = (
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"7z\xbc\xaf",
    b"Rar!",
    b"\x28\xb5\x2f\xfd",
)


@dataclass
class UploadReport:
    """What the validator found; ``ok`` only when ``errors`` is empty."""

    filename: str
    kind: str = ""
    size: int = 0
    unpacked_size: int = 0
    files: list[str] = field(default_factory=list)
    entry_point: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_text(self) -> str:
        """Human-readable log stored on the version and returned on rejection."""
        head = f"{self.filename}: {self.kind or 'unknown'}, {self.size} bytes"
        if self.kind == "zip":
            head += f", {len(self.files)} files, {self.unpacked_size} bytes unpacked"
        lines = [head]
        lines += [f"error: {e}" for e in self.errors]
        if self.ok:
            lines.append(f"ok: entry point {self.entry_point}")
        return "\n".join(lines)


def _check_source(name: str, data: bytes, report: UploadReport) -> None:
    """Python source must be UTF-8 without NUL bytes and must compile (never run)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.errors.append(f"{name}: not UTF-8 text (byte {exc.start})")
        return
    if "\x00" in text:
        report.errors.append(f"{name}: contains NUL bytes")
        return
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        report.errors.append(f"{name}: syntax error line {exc.lineno}: {exc.msg}")


def _bad_name(name: str) -> str | None:
    """Why a member name is unsafe (zip slip), or None."""
    if not name or "\x00" in name:
        return "empty or NUL in name"
    if "\\" in name:
        return "backslash in name"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    parts = PurePosixPath(name).parts
    if any(p == ".." for p in parts):
        return "'..' in path"
    if len(name) > 255 or len(parts) > 16:
        return "path too long or too deep"
    return None


def validate_upload(*, filename: str, data: bytes, entry_point: str | None = None) -> UploadReport:
    """Check an upload and return a report; never raises on hostile input."""
    report = UploadReport(filename=filename, size=len(data))
    max_bytes = settings.LADDER_UPLOAD_MAX_BYTES
    if len(data) > max_bytes:
        report.errors.append(f"upload is {len(data)} bytes; the limit is {max_bytes}")
        return report
    if len(data) == 0:
        report.errors.append("upload is empty")
        return report
    lower = filename.lower()
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        report.kind = "zip"
        _validate_zip(data, report, entry_point)
    elif lower.endswith(".py"):
        report.kind = "py"
        base = PurePosixPath(filename.replace("\\", "/")).name
        _check_source(base, data, report)
        report.files = [base]
        report.unpacked_size = len(data)
        report.entry_point = base
    elif lower.endswith(NESTED_SUFFIXES) or data.startswith(NESTED_MAGIC):
        report.errors.append("only a .py file or a .zip archive is accepted")
    else:
        report.errors.append("unknown file type: upload a .py file or a .zip archive")
    return report


def _validate_zip(data: bytes, report: UploadReport, entry_point: str | None) -> None:
    max_files = settings.LADDER_UPLOAD_MAX_FILES
    max_unpacked = settings.LADDER_UPLOAD_MAX_UNPACKED_BYTES
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        report.errors.append(f"not a readable zip archive: {exc}")
        return
    if len(infos) > max_files:
        report.errors.append(f"archive has {len(infos)} entries; the limit is {max_files}")
        return
    seen: set[str] = set()
    total = 0
    sources: dict[str, bytes] = {}
    for info in infos:
        name = info.filename
        why = _bad_name(name)
        if why:
            report.errors.append(f"{name!r}: unsafe path ({why})")
            continue
        mode = info.external_attr >> 16
        if info.is_dir():
            continue
        if mode and not (stat.S_ISREG(mode) or mode & 0o170000 == 0):
            report.errors.append(f"{name}: not a regular file (symlink or special file)")
            continue
        norm = str(PurePosixPath(name))
        if norm.lower() in seen:
            report.errors.append(f"{name}: duplicate entry")
            continue
        seen.add(norm.lower())
        if norm.lower().endswith(NESTED_SUFFIXES):
            report.errors.append(f"{name}: nested archives are not allowed")
            continue
        if info.flag_bits & 0x1:
            report.errors.append(f"{name}: encrypted entries are not allowed")
            continue
        buf = bytearray()
        try:
            with zf.open(info) as member:
                while True:
                    chunk = member.read(CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > max_unpacked:
                        report.errors.append(
                            f"archive unpacks to more than {max_unpacked} bytes (zip bomb?)"
                        )
                        report.unpacked_size = total
                        return
                    buf += chunk
        except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, ValueError) as exc:
            report.errors.append(f"{name}: cannot be decompressed: {exc}")
            continue
        if bytes(buf[:8]).startswith(NESTED_MAGIC):
            report.errors.append(f"{name}: nested archives are not allowed")
            continue
        report.files.append(norm)
        if norm.endswith(".py"):
            sources[norm] = bytes(buf)
    report.unpacked_size = total
    for name, src in sources.items():
        _check_source(name, src, report)
    if entry_point:
        if entry_point not in report.files:
            report.errors.append(f"entry point {entry_point!r} is not in the archive")
        elif not entry_point.endswith(".py"):
            report.errors.append(f"entry point {entry_point!r} is not a .py file")
        else:
            report.entry_point = entry_point
    else:
        found = [e for e in DEFAULT_ENTRY_POINTS if e in report.files]
        if found:
            report.entry_point = found[0]
        else:
            report.errors.append(
                "missing entry point: put bot.py (or main.py / __main__.py) at the archive root,"
                " or name the entry point"
            )
