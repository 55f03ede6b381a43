"""examples/cpp built once per test session (``make -C examples/cpp``), or a skip saying
which Debian package is missing (a failure under CI=true: .ci/run installs them)."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from tests.support.matches import needed
from tests.support.processes import ROOT

CPP_DIR = ROOT / "examples" / "cpp"
BUILD_TIMEOUT_S = 1200.0  # protoc's output for three protos: about a CPU minute with -O1


@cache
def _build() -> tuple[Path | None, str]:
    done = subprocess.run(
        ["make", "-C", str(CPP_DIR)], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    binary = CPP_DIR / "build" / "bot"
    return (binary if done.returncode == 0 else None), done.stdout + done.stderr


def cpp_bot() -> Path:
    """The built example bot's path."""
    needed("g++ (Debian package g++)", shutil.which("g++") is not None)
    needed("protoc (Debian package protobuf-compiler)", shutil.which("protoc") is not None)
    needed(
        "grpc_cpp_plugin (Debian package protobuf-compiler-grpc)",
        shutil.which("grpc_cpp_plugin") is not None,
    )
    has_grpc = shutil.which("pkg-config") is not None and (
        subprocess.run(["pkg-config", "--exists", "grpc++"], check=False).returncode == 0
    )
    needed("gRPC C++ headers (Debian packages libgrpc++-dev pkg-config)", has_grpc)
    binary, log = _build()
    assert binary is not None, f"make -C examples/cpp failed:\n{log[-4000:]}"
    return binary
