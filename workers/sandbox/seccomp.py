"""The system-call filter of every hosted seat: a seccomp policy handed to bubblewrap.

bubblewrap narrows what a bot can reach; this narrows what it can ask the
kernel. The policy is a deny list (everything else allowed) compiled with
libseccomp (``libseccomp.so.2``, called through ctypes: no Python binding to
install) into a classic BPF program, which bubblewrap loads with ``--seccomp FD``
just before it executes the sandbox's first process, so ``boot.py`` and the bot
and all their children run under it and can never remove it.

What is denied, and why, follows Docker's default profile (the calls it refuses
to a container without capabilities) and Flatpak's (``flatpak-run.c``: the
namespace, mount, keyring, terminal-injection and socket-family rules); both
are public. A denied call fails with ``EPERM`` and the bot goes on. Two
exceptions keep ordinary programs working: ``clone3`` fails with ``ENOSYS``
(its flags sit behind a pointer the filter cannot read, and glibc then falls
back to ``clone``, whose namespace flags the filter does read), and a socket of
a family other than unix, inet, inet6 and netlink fails with ``EAFNOSUPPORT``.
System calls of another architecture (``int 0x80``, x32) kill the process:
libseccomp's default for a foreign architecture, so none bypasses the list.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass
from functools import cache

# Denied outright with EPERM, grouped by why (docs/sandbox.md lists them).
DENIED: dict[str, tuple[str, ...]] = {
    "namespaces": ("unshare", "setns"),
    "mounts": (
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "move_mount",
        "open_tree",
        "mount_setattr",
    ),
    "tracing other processes": (
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "kcmp",
        "pidfd_getfd",
        "process_madvise",
    ),
    "the kernel keyring": ("keyctl", "add_key", "request_key"),
    "kernel attack surface": (
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "fanotify_init",
        "lookup_dcookie",
        "open_by_handle_at",
    ),
    "kernel modules and reboot": (
        "init_module",
        "finit_module",
        "delete_module",
        "create_module",
        "query_module",
        "get_kernel_syms",
        "kexec_load",
        "kexec_file_load",
        "reboot",
    ),
    "the machine's settings": (
        "acct",
        "quotactl",
        "quotactl_fd",
        "swapon",
        "swapoff",
        "settimeofday",
        "clock_settime",
        "sethostname",
        "setdomainname",
        "syslog",
        "vhangup",
        "iopl",
        "ioperm",
        "_sysctl",
        "sysfs",
        "ustat",
        "uselib",
        "nfsservctl",
    ),
    "memory placement (NUMA)": (
        "mbind",
        "set_mempolicy",
        "get_mempolicy",
        "migrate_pages",
        "move_pages",
        "set_mempolicy_home_node",
    ),
}
# clone with any of these flags (a new namespace) is denied; threads and forks are not.
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# personality(2): only plain Linux (PER_LINUX), as Flatpak: no ASLR off, no READ_IMPLIES_EXEC,
# no other execution domain. (libseccomp allows one comparison per argument and rule, so
# Docker's five allowed values cannot be said in a deny list.)
PER_LINUX = 0
TIOCSTI, TIOCLINUX = 0x5412, 0x541C  # typing into, or driving, a terminal
SOCKET_FAMILIES_ALLOWED = (0, 1, 2, 10, 16)  # AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
AF_MAX = 46

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_MASKED_EQ = 1, 4, 5, 7


def scmp_act_errno(code: int) -> int:
    """libseccomp's SCMP_ACT_ERRNO: fail the call with ``code``."""
    return 0x00050000 | (code & 0xFFFF)


class SeccompUnavailable(RuntimeError):
    """libseccomp cannot be loaded, or refused the policy."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


@dataclass(frozen=True)
class Rule:
    """One rule: ``syscall`` gets ``errno`` when every comparison holds (or always)."""

    syscall: str
    errno: int = errno.EPERM
    # (argument index, operator, datum_a, datum_b)
    args: tuple[tuple[int, int, int, int], ...] = ()


def policy() -> list[Rule]:
    """The whole policy as rules, in the order they are added."""
    rules = [Rule(name) for names in DENIED.values() for name in names]
    rules += [
        Rule("clone", args=((0, SCMP_CMP_MASKED_EQ, flag, flag),))
        for flag in CLONE_NAMESPACE_FLAGS.values()
    ]
    rules.append(Rule("clone3", errno.ENOSYS))
    rules.append(Rule("personality", args=((0, SCMP_CMP_NE, PER_LINUX, 0),)))
    rules += [
        Rule("ioctl", args=((1, SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, request),))
        for request in (TIOCSTI, TIOCLINUX)
    ]
    rules += [
        Rule("socket", errno.EAFNOSUPPORT, ((0, SCMP_CMP_EQ, family, 0),))
        for family in range(AF_MAX)
        if family not in SOCKET_FAMILIES_ALLOWED
    ]
    rules.append(Rule("socket", errno.EAFNOSUPPORT, ((0, SCMP_CMP_GE, AF_MAX, 0),)))
    return rules


@cache
def _libseccomp() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(
            f"libseccomp is not installed ({exc}); install the libseccomp2 package"
        ) from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


@cache
def filter_program() -> bytes:
    """The policy compiled to a BPF program for this machine's architecture (built once)."""
    lib = _libseccomp()
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        for rule in policy():
            number = syscall_number(rule.syscall)
            if number < 0:  # not a system call of this architecture (e.g. create_module)
                continue
            cmps = (_ArgCmp * max(1, len(rule.args)))(*(_ArgCmp(*a) for a in rule.args))
            rc = lib.seccomp_rule_add_array(
                ctx, scmp_act_errno(rule.errno), number, len(rule.args), cmps
            )
            if rc < 0:
                raise SeccompUnavailable(f"libseccomp refused the rule for {rule.syscall}: {rc}")
        fd = os.memfd_create("digdown-seccomp-export", os.MFD_CLOEXEC)
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
            if rc < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {rc}")
            size = os.lseek(fd, 0, os.SEEK_END)
            return os.pread(fd, size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


def filter_fd() -> int:
    """A fresh descriptor, at offset 0, holding the program (bubblewrap reads it to its end)."""
    program = filter_program()
    fd = os.memfd_create("digdown-seccomp", 0)  # not CLOEXEC: passed to bubblewrap
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def denied_calls() -> list[str]:
    """Every system call the policy refuses outright or by argument (for docs and tests)."""
    names = [name for names in DENIED.values() for name in names]
    return [*names, "clone (namespace flags)", "clone3", "personality", "ioctl", "socket"]


def syscall_number(name: str) -> int:
    """This architecture's number of system call ``name`` (negative when it has none)."""
    return int(_libseccomp().seccomp_syscall_resolve_name(name.encode()))
