"""Machines for the cluster drills: Linux network namespaces joined by one bridge.

Each *node* is a network namespace with one interface (``eth0``, the end of a
veth pair whose other end is a port of the bridge ``br0`` in the hub namespace)
and one address of ``SUBNET``. The addresses exist only inside these namespaces:
there is no default route and no NAT, so nothing a drill sends can leave them,
and the host namespace never sends to them (the tests reach PostgreSQL and Redis
through unix sockets, and everything else by running a command inside a node).

Faults, all made with ``tc`` because that is what every kernel has (no netem,
iptables or nft needed): each interface on either side of a link gets an htb
qdisc with a pass class (1:10, the default) and a drop class (1:20, a pfifo of
length 0, which drops whatever is sent to it). Then

- ``cut(a, b)``: u32 filters send a's packets to b, and b's to a, into the drop
  class on both veth ends of a - a partition as silent as a firewall DROP;
- ``isolate(a)``: the bridge port of ``a`` goes down (every link of it at once);
- ``lossy()``: on every interface, TCP segments whose checksum ends in six zero
  bits (one in 64, pseudo-random, and a retransmission has another checksum) are
  dropped.

Everything is undone by ``close()``: namespaces deleted (their interfaces go with
them), so nothing is left even when a test fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

SUBNET = "10.213.77"  # .0/24, inside the namespaces only
PASS, DROP = "1:10", "1:20"
LOSS_PRIO = 50


class NetnsUnavailable(RuntimeError):
    """Namespaces cannot be made here (not root, or no ``ip``); the message says why."""


def check_netns() -> None:
    """Raise NetnsUnavailable unless this process can create namespaces and bridges."""
    if os.geteuid() != 0:
        raise NetnsUnavailable("network namespaces need root (CI runs as root)")
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise NetnsUnavailable(f"{tool} is not installed (iproute2)")


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip()}")
    return done


@dataclass
class Node:
    name: str  # short: "data", "w1", ...
    netns: str
    index: int
    port: str  # the bridge port (hub side)

    @property
    def ip(self) -> str:
        return f"{SUBNET}.{self.index}"

    def exec_prefix(self) -> list[str]:
        return ["ip", "netns", "exec", self.netns]


@dataclass
class Network:
    prefix: str
    nodes: dict[str, Node] = field(default_factory=dict)
    made: list[str] = field(default_factory=list)
    cuts: set[tuple[str, str, int | None]] = field(default_factory=set)
    one_way: set[tuple[str, str]] = field(default_factory=set)

    @property
    def hub(self) -> str:
        return f"{self.prefix}hub"

    def open(self, names: Sequence[str]) -> None:
        self._add_netns(self.hub)
        sh("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.hub, "link", "set", "br0", "up")
        for i, name in enumerate(names, start=2):
            node = Node(name, f"{self.prefix}{name}", i, f"v{i}")
            self._add_netns(node.netns)
            sh("ip", "-n", self.hub, "link", "add", node.port, "type", "veth",
               "peer", "name", "eth0", "netns", node.netns)  # fmt: skip
            sh("ip", "-n", self.hub, "link", "set", node.port, "master", "br0", "up")
            sh("ip", "-n", node.netns, "addr", "add", f"{node.ip}/24", "dev", "eth0")
            sh("ip", "-n", node.netns, "link", "set", "eth0", "up")
            sh("ip", "-n", node.netns, "link", "set", "lo", "up")
            for ns, dev in ((node.netns, "eth0"), (self.hub, node.port)):
                self._classes(ns, dev)
            self.nodes[name] = node

    def _add_netns(self, netns: str) -> None:
        sh("ip", "netns", "del", netns, check=False)  # a leftover of a killed run
        sh("ip", "netns", "add", netns)
        self.made.append(netns)

    @staticmethod
    def _classes(ns: str, dev: str) -> None:
        tc = ["ip", "netns", "exec", ns, "tc"]
        sh(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10")
        for classid in (PASS, DROP):
            sh(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", classid,
               "htb", "rate", "10gbit", "quantum", "60000")  # fmt: skip
        sh(*tc, "qdisc", "add", "dev", dev, "parent", DROP, "handle", "20:", "pfifo", "limit", "0")

    def _filter(self, ns: str, dev: str, prio: int, *match: str, add: bool) -> None:
        tc = ["ip", "netns", "exec", ns, "tc", "filter"]
        if add:
            sh(*tc, "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", str(prio),
               "u32", *match, "flowid", DROP)  # fmt: skip
        else:
            sh(*tc, "del", "dev", dev, "parent", "1:", "prio", str(prio), check=False)

    def _cut(self, a: Node, b: Node, port: int | None, add: bool) -> None:
        prio = 100 + b.index + (1000 if port else 0)
        to = ["match", "ip", "dst", f"{b.ip}/32"]
        back = ["match", "ip", "src", f"{b.ip}/32"]
        if port:
            to += ["match", "ip", "dport", str(port), "0xffff"]
            back += ["match", "ip", "sport", str(port), "0xffff"]
        self._filter(a.netns, "eth0", prio, *to, add=add)
        self._filter(self.hub, a.port, prio, *back, add=add)

    def cut(self, a: str, *others: str, port: int | None = None) -> None:
        """Drop every packet between node ``a`` and each of ``others`` (only those of
        ``others``' ``port`` when given), both ways."""
        for b in others:
            self._cut(self.nodes[a], self.nodes[b], port, True)
            self.cuts.add((a, b, port))

    def heal(self, a: str, *others: str, port: int | None = None) -> None:
        for b in others:
            self._cut(self.nodes[a], self.nodes[b], port, False)
            self.cuts.discard((a, b, port))

    def cut_one_way(self, a: str, b: str) -> None:
        """Drop what node ``a`` sends to node ``b`` only (``b``'s packets still reach ``a``:
        a half-broken link, where ``a``'s connects time out and ``b`` sees silence)."""
        self._filter(self.nodes[a].netns, "eth0", 2000 + self.nodes[b].index,
                     "match", "ip", "dst", f"{self.nodes[b].ip}/32", add=True)  # fmt: skip
        self.one_way.add((a, b))

    def heal_one_way(self, a: str, b: str) -> None:
        self._filter(self.nodes[a].netns, "eth0", 2000 + self.nodes[b].index, add=False)
        self.one_way.discard((a, b))

    def heal_all(self) -> None:
        for a, b, port in list(self.cuts):
            self.heal(a, b, port=port)
        for a, b in list(self.one_way):
            self.heal_one_way(a, b)
        for node in self.nodes.values():
            sh("ip", "-n", self.hub, "link", "set", node.port, "up", check=False)
        self.lossy(False)

    def isolate(self, name: str, down: bool = True) -> None:
        """Take node ``name``'s bridge port down (up with ``down=False``)."""
        sh("ip", "-n", self.hub, "link", "set", self.nodes[name].port, "down" if down else "up")

    def lossy(self, on: bool = True) -> None:
        """Drop one TCP segment in 64 on every interface, both sides of every link (one in
        16 stalled every match for minutes: hundreds of round trips each, each loss a
        retransmission timeout)."""
        match = ("match", "ip", "protocol", "6", "0xff", "match", "u16", "0", "0x003f", "at", "36")
        for node in self.nodes.values():
            for ns, dev in ((node.netns, "eth0"), (self.hub, node.port)):
                if on:
                    self._filter(ns, dev, LOSS_PRIO, *match, add=True)
                else:
                    self._filter(ns, dev, LOSS_PRIO, add=False)

    def dropped(self) -> int:
        """Packets the drop classes dropped so far (proof a fault did something)."""
        total = 0
        for node in self.nodes.values():
            for ns, dev in ((node.netns, "eth0"), (self.hub, node.port)):
                out = sh("ip", "netns", "exec", ns, "tc", "-s", "class", "show", "dev", dev,
                         "classid", DROP, check=False).stdout  # fmt: skip
                if "dropped" in out:
                    total += int(out.split("dropped", 1)[1].split(",")[0].strip())
        return total

    def close(self) -> None:
        for netns in reversed(self.made):
            sh("ip", "netns", "del", netns, check=False)
        self.made.clear()


def leftover_namespaces(prefix: str) -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(prefix)]
