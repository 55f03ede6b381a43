"""The seccomp policy, tried from inside a real sandboxed bot playing a real match.

Each call the policy denies is made by the hostile bot ``syscalls`` (numbers
resolved here, on the host) and must fail with the policy's errno; ordinary
calls (threads, fork, unix sockets, plain personality) still work, and the
bot then serves and plays its match without a fault.
"""

from __future__ import annotations

import errno

import pytest

from tests.support.processes import Proc
from tests.workers.sandbox.conftest import hostile_bundle
from tests.workers.sandbox.test_hostile import play, warm_worker  # noqa: F401 (its fixture)
from workers.sandbox.seccomp import CLONE_NAMESPACE_FLAGS, DENIED, syscall_number

pytestmark = pytest.mark.usefixtures("sandbox_ready")

SIGCHLD = 17
AF_UNIX, AF_PACKET, AF_ALG, AF_VSOCK = 1, 17, 38, 40
SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET = 1, 2, 5
ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, PER_BSD = 0x0040000, 0x0400000, 0x0006
TIOCSTI, TIOCLINUX = 0x5412, 0x541C


def _calls() -> tuple[list[list], dict[str, int]]:
    """[label, number, args...] for the bot, and the errno each label must get."""
    calls: list[list] = []
    expect: dict[str, int] = {}

    def add(label: str, name: str, *args: int, want: int = errno.EPERM) -> None:
        number = syscall_number(name)
        if number >= 0:
            calls.append([label, number, *args])
            expect[label] = want

    for names in DENIED.values():
        for name in names:
            add(name, name)
    for flag_name, flag in CLONE_NAMESPACE_FLAGS.items():
        add(f"clone {flag_name}", "clone", flag | SIGCHLD)
        add(f"unshare {flag_name}", "unshare", flag)
    add("clone3", "clone3", want=errno.ENOSYS)
    for label, persona in [
        ("ADDR_NO_RANDOMIZE", ADDR_NO_RANDOMIZE),
        ("READ_IMPLIES_EXEC", READ_IMPLIES_EXEC),
        ("PER_BSD", PER_BSD),
    ]:
        add(f"personality {label}", "personality", persona)
    add("ioctl TIOCSTI", "ioctl", 0, TIOCSTI, 0)
    add("ioctl TIOCLINUX", "ioctl", 0, TIOCLINUX, 0)
    for label, family, kind in [
        ("AF_PACKET", AF_PACKET, SOCK_DGRAM),
        ("AF_ALG", AF_ALG, SOCK_SEQPACKET),
        ("AF_VSOCK", AF_VSOCK, SOCK_STREAM),
        ("family 200", 200, SOCK_STREAM),
    ]:
        add(f"socket {label}", "socket", family, kind, 0, want=errno.EAFNOSUPPORT)
    # Allowed: these must succeed (or fail for their own reason, never by the filter).
    add("allowed clone (a fork)", "clone", SIGCHLD, want=0)
    add("allowed personality PER_LINUX", "personality", 0, want=0)
    add("allowed socket AF_UNIX", "socket", AF_UNIX, SOCK_STREAM, 0, want=0)
    return calls, expect


def test_every_denied_call_fails_and_the_bot_plays_on(engine: Proc, remote_random: Proc) -> None:
    calls, expect = _calls()
    assert len(calls) > 60
    played = play(engine, [hostile_bundle("syscalls", calls=calls)], [remote_random.address])
    found = played.probes()
    assert found["seccomp"] == "2", "no seccomp filter in the sandbox"
    wrong = {}
    for label, want in expect.items():
        got = found.get(label, "not tried")
        ok = got.startswith("SUCCEEDED") if want == 0 else got.startswith(f"failed errno {want} ")
        if not ok:
            wrong[label] = got
    assert wrong == {}, wrong
    assert found["thread"].startswith("SUCCEEDED") and found["fork"] == "SUCCEEDED child exit 7"
    assert played.faults() == [] and not played.out(0)  # denied calls did not end the bot
