"""Another machine for a test: one network namespace joined to this one by a veth pair.

The namespace (``cx-<pid>``) has one interface with ``10.214.<n>.2/30``; this side
has ``10.214.<n>.1``. A process run inside it (``exec_prefix()``) reaches this
machine only at ``host_ip``: not at 127.0.0.1 (its own loopback is empty), so a
server that a bot there reaches must listen on a real address, as for a bot at
home reaching a ladder. ``close()`` deletes the namespace (the pair goes with it).
"""

from __future__ import annotations

import os
import shutil
import subprocess


class NetnsUnavailable(RuntimeError):
    """No namespace can be made here (not root, or no ``ip``)."""


def _sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise NetnsUnavailable(f"{' '.join(args)}: {done.stderr.strip()}")
    return done


class NetnsPair:
    def __init__(self, tag: str = "") -> None:
        n = os.getpid() % 250 + 1
        self.name = f"cx-{tag}{os.getpid()}"
        self.host_dev = f"cxh{os.getpid() % 100000}"
        self.host_ip = f"10.214.{n}.1"
        self.ip = f"10.214.{n}.2"
        self.opened = False

    def open(self) -> NetnsPair:
        if os.geteuid() != 0:
            raise NetnsUnavailable("network namespaces need root (CI runs as root)")
        if shutil.which("ip") is None:
            raise NetnsUnavailable("ip is not installed (iproute2)")
        _sh("ip", "netns", "del", self.name, check=False)  # a killed run's leftover
        _sh("ip", "link", "del", self.host_dev, check=False)
        _sh("ip", "netns", "add", self.name)
        self.opened = True
        _sh("ip", "link", "add", self.host_dev, "type", "veth", "peer", "name", "eth0",
            "netns", self.name)  # fmt: skip
        _sh("ip", "addr", "add", f"{self.host_ip}/30", "dev", self.host_dev)
        _sh("ip", "link", "set", self.host_dev, "up")
        _sh("ip", "-n", self.name, "addr", "add", f"{self.ip}/30", "dev", "eth0")
        _sh("ip", "-n", self.name, "link", "set", "eth0", "up")
        _sh("ip", "-n", self.name, "link", "set", "lo", "up")
        return self

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.name]

    def close(self) -> None:
        if self.opened:
            _sh("ip", "netns", "del", self.name, check=False)
            _sh("ip", "link", "del", self.host_dev, check=False)
            self.opened = False
