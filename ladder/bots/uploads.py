"""Validation of uploaded hosted-bot source: one ``.py`` file or a ``.zip``.

Nothing here extracts to disk: the archive is read in memory and every member is
stream-decompressed with a running byte counter, because the sizes declared in a
zip header are attacker-controlled (zip bombs, zip-slip names). The report lists every problem
found so the author can fix them in one go.

Member names are checked as the central directory spells them
(``ZipInfo.orig_filename``): ``zipfile`` cuts ``filename`` at the first NUL, so a
check on ``filename`` would never see one.

Python sources are compiled (never run) in a separate interpreter with a
memory and CPU limit (`compile_sources`): a compile bomb - ``1+1+...`` with
200,000 terms, 500,000 unary minus signs, deep nesting - raises RecursionError
or MemoryError, or takes gigabytes, inside ``compile()``; there it costs the
child process, and the author gets the reason in the report.
"""

from __future__ import annotations

import io
import json
import signal
import stat
import subprocess
import sys
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings

from digdown import text

CHUNK = 64 * 1024
DEFAULT_ENTRY_POINTS = ("bot.py", "main.py", "__main__.py")
NESTED_SUFFIXES = (
    ".zip", ".whl", ".egg", ".jar", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar",
)  # fmt: skip
COMPILE_MEMORY_BYTES = 512 * 1024 * 1024  # address space of the compiling process
COMPILE_CPU_S = 10  # its CPU seconds
COMPILE_TIMEOUT_S = 30.0  # its wall-clock seconds (a busy machine is slower than its CPU limit)
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
        head = f"{text.clean(self.filename, 255)}: {self.kind or 'unknown'}, {self.size} bytes"
        if self.kind == "zip":
            head += f", {len(self.files)} files, {self.unpacked_size} bytes unpacked"
        lines = [head]
        lines += [f"error: {e}" for e in self.errors]
        if self.ok:
            lines.append(f"ok: entry point {self.entry_point}")
        return "\n".join(lines)


# Runs in a child interpreter (``python -I -S -c``): limits itself before it reads
# any input, then compiles every source it is given and answers one JSON line each.
_COMPILER = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
for name, source in json.loads(sys.stdin.buffer.read()).items():
    print(json.dumps(["start", name]), flush=True)
    try:
        compile(source, name, "exec", dont_inherit=True)
        error = ""
    except SyntaxError as exc:
        error = f"syntax error line {{exc.lineno}}: {{exc.msg}}"
    except (RecursionError, MemoryError):
        error = "too deeply nested or too large to compile"
    except (ValueError, OverflowError) as exc:
        error = f"cannot be compiled: {{exc}}"
    print(json.dumps(["done", name, error]), flush=True)
"""


def _decode_source(name: str, data: bytes, report: UploadReport) -> str | None:
    """Python source must be UTF-8 without NUL bytes; the text, or None (error reported)."""
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.errors.append(f"{name}: not UTF-8 text (byte {exc.start})")
        return None
    if "\x00" in source:
        report.errors.append(f"{name}: contains NUL bytes")
        return None
    return source


def _child_failure(returncode: int) -> str:
    if returncode == -signal.SIGXCPU:
        return f"took more than {COMPILE_CPU_S} s of CPU to compile"
    if returncode < 0:
        return f"could not be compiled (the compiler died of {signal.Signals(-returncode).name})"
    return f"could not be compiled (the compiler exited with {returncode})"


def compile_sources(sources: dict[str, str], report: UploadReport) -> None:
    """Compile every source (never run it) in a limited child interpreter; report errors.

    The parent only waits (with a deadline), so no source can take its memory,
    its stack or its time; what the child could not finish is blamed on the file
    it was compiling.
    """
    if not sources:
        return
    compiler = _COMPILER.format(memory=COMPILE_MEMORY_BYTES, cpu=COMPILE_CPU_S)
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", compiler],
            input=json.dumps(sources).encode(),
            capture_output=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
            env={},
        )
        lines, returncode = done.stdout.decode().splitlines(), done.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if exc.stdout else ""
        lines, returncode = out.splitlines(), None
    pending = ""
    for line in lines:
        try:
            what, name, *error = json.loads(line)
        except ValueError:
            break  # a line cut by the child's death
        pending = name if what == "start" else ""
        if what == "done" and error and error[0]:
            report.errors.append(f"{name}: {error[0]}")
    if returncode == 0 and not pending:
        return
    why = (
        f"took longer than {COMPILE_TIMEOUT_S:.0f} s to compile"
        if returncode is None
        else _child_failure(returncode)
    )
    report.errors.append(f"{pending}: {why}" if pending else why)


def _bad_name(name: str) -> str | None:
    """Why a member name (as the central directory spells it) is unsafe, or None."""
    if not name or "\x00" in name:
        return "empty or NUL in name"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "control character in name"
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
        base = text.clean(PurePosixPath(filename.replace("\\", "/")).name, 255)
        source = _decode_source(base, data, report)
        if source is not None:
            compile_sources({base: source}, report)
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
    sources: dict[str, str] = {}
    for info in infos:
        why = _bad_name(info.orig_filename)
        if why:
            report.errors.append(f"{text.quote(info.orig_filename, 100)}: unsafe path ({why})")
            continue
        name = info.filename
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
            source = _decode_source(norm, bytes(buf), report)
            if source is not None:
                sources[norm] = source
    report.unpacked_size = total
    compile_sources(sources, report)
    if entry_point:
        if entry_point not in report.files:
            report.errors.append(
                f"entry point {text.quote(entry_point, 100)} is not in the archive"
            )
        elif not entry_point.endswith(".py"):
            report.errors.append(f"entry point {text.quote(entry_point, 100)} is not a .py file")
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
