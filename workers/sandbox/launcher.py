"""Start one hosted seat in a bubblewrap sandbox for one match, and make sure it ends.

    with hosted_seat(bundle, limits) as seat:
        run_match(engine, [seat.bot_spec(name="mine"), other], ...)
    seat.log_bytes()      # its stdout+stderr, capped, for its owner only

One process tree per hosted seat per match. bubblewrap builds the namespaces
(PID, network, IPC, UTS, mount; user when the worker is not root) and the
read-only view of ``view.py``; ``boot.py`` then drops to the seat's uid, sets
the rlimits and execs the bot, which serves the bot protocol on a unix socket in
a directory only this worker and this seat share. The seat ends when the block
ends, when its wall-clock limit passes, or when the bot exits; ending it kills
bubblewrap, whose PID-namespace init takes every process of the bot with it
(``--die-with-parent``). Afterwards no process of the seat may be left: the
launcher looks (by PID namespace and, for a root worker, by uid) and kills any.

Two ways to run, chosen by who the worker is:

- root worker: bubblewrap runs privileged (no user namespace needed) and the bot
  runs as a uid of its own, leased per seat from ``SandboxConfig.uids`` (so one
  bot's process limit, signals and files never meet another's);
- other worker: bubblewrap runs unprivileged in a new user namespace (which must
  be allowed on the machine); the bot keeps the worker's uid outside it.

Where neither works, hosted seats raise ``SandboxUnavailable`` with the reason,
unless ``SandboxConfig.unsafe_dev_mode`` allows running the bot as a plain
subprocess (limits and an empty environment, but no isolation at all).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from digdown.healthcheck import wait_until_serving
from workers.runner import BotSpec
from workers.sandbox import pinning
from workers.sandbox.bundle import Bundle, BundleError
from workers.sandbox.capture import CappedLog
from workers.sandbox.cgroups import (
    SeatCgroup,
    ThreadWaits,
    cgroup_support,
    process_tree,
    process_tree_cpu_seconds,
    process_tree_memory_peak,
)
from workers.sandbox.seccomp import SeccompUnavailable, filter_fd
from workers.sandbox.view import BOOT, LIB_DIR, runtime_view

log = logging.getLogger("workers.sandbox")

BOT_SERVICE = "digdown.v1.Bot"
SOCKET_DIR = "/run/bot"
SOCKET = f"{SOCKET_DIR}/bot.sock"
LISTEN = f"unix:{SOCKET}"
SCRATCH = "/bot"
BUNDLE = "/bundle"
USERNS_UID = 1000  # the bot's uid inside its user namespace (unprivileged worker)
CHECK_TIMEOUT_S = 15.0
KILL_WAIT_S = 10.0


class SandboxUnavailable(RuntimeError):
    """Hosted bots cannot run on this worker (and unsafe development mode is off)."""


@dataclass(frozen=True)
class SandboxLimits:
    """What one hosted seat may use during one match (see docs/sandbox.md)."""

    cpu_s: int = 300  # RLIMIT_CPU: SIGXCPU, then SIGKILL 2 s later
    memory_bytes: int = 1024 * 1024 * 1024  # RLIMIT_AS (address space)
    open_files: int = 128  # RLIMIT_NOFILE
    file_size_bytes: int = 16 * 1024 * 1024  # RLIMIT_FSIZE (largest file it may write)
    processes: int = 64  # RLIMIT_NPROC: processes and threads of its uid
    scratch_bytes: int = 64 * 1024 * 1024  # size of its writable tmpfs (its files + /tmp)
    nice: int = 10  # the worker and the engine come first on a busy machine
    start_s: float = 15.0  # until the bot's health service says SERVING
    wall_s: float = 1800.0  # whole life of the seat, whatever happens
    log_bytes: int = 64 * 1024  # output kept for its owner
    cpus: float = 1.0  # cpu.max: cores' worth of CPU the seat may use (cgroup mode)

    def rlimits(self) -> dict[str, int]:
        d = asdict(self)
        keys = ("cpu_s", "memory_bytes", "open_files", "file_size_bytes", "processes", "nice")
        return {k: d[k] for k in keys}


@dataclass(frozen=True)
class SandboxConfig:
    """How this worker runs hosted seats."""

    # Run hosted bots WITHOUT isolation when bubblewrap cannot (development only).
    unsafe_dev_mode: bool = False
    # Root worker: the bot of each seat runs as one of these uids (leased, never shared).
    uids: range = range(2_000_000_000, 2_000_000_000 + 100_000)
    bwrap: str = "bwrap"
    # Where seat directories are made (default: the system temp dir).
    workdir: str | None = None
    # A cgroup v2 directory delegated to this worker ("": its own; workers/sandbox/cgroups.py).
    cgroup: str = ""


@dataclass
class HostedSeat:
    """A started (or failed) hosted seat: dial ``address`` while the block runs."""

    address: str
    log: CappedLog
    mode: str  # "root", "userns" or "unsafe"
    start_error: str = ""  # why it did not start; the runner forfeits the seat with it
    # It did not serve within the start limit (alive, not crashed): maybe the machine's
    # doing, so a smoke match judges it apart (workers/smoke.py); ``waited_s`` then says
    # how long its threads waited for a CPU during the start.
    start_timed_out: bool = False
    start_s: float = 0.0
    uid: int | None = None
    proc: subprocess.Popen[bytes] | None = None
    init_pid: int = 0  # host pid of the sandbox's PID-namespace init
    pid_namespace: int = 0
    ended: str = ""  # how it ended, once it has
    leftovers: list[int] = field(default_factory=list)  # pids found (and killed) afterwards
    cgroup: SeatCgroup | None = None  # its own cgroup, where the worker has one to give
    cpu_s: float = 0.0  # CPU time of its processes, as last read
    memory_peak: int = 0  # bytes, as last read
    waited_s: float = 0.0  # its waits for a CPU, as last read (never less)
    thread_waits: ThreadWaits = field(default_factory=ThreadWaits)  # without a cgroup's
    killed_why: str = ""  # the launcher's reason when it killed the seat (a limit)
    cpus: list[int] = field(default_factory=list)  # the CPUs it is pinned to (pinning.py)

    def cpu_seconds(self) -> float | None:
        """CPU seconds the seat's processes have used so far (None: cannot be read now)."""
        if self.cgroup is not None:
            used = self.cgroup.cpu_seconds()
        elif self.init_pid:
            used = process_tree_cpu_seconds(self.init_pid)
        elif self.proc is not None:  # unsafe mode: the plain process
            used = process_tree_cpu_seconds(self.proc.pid)
        else:
            used = None
        if used is not None:
            self.cpu_s = max(self.cpu_s, used)
        return used

    def cpu_usage(self) -> tuple[float, float] | None:
        """(CPU seconds, seconds it waited for a CPU) so far; the runner's clock.

        The wait is its cgroup's CPU stall where the seat is pinned to one CPU: exact,
        with the threads and processes that exited (``pinning.py``). Otherwise the
        waits of its threads (scheduler statistics, ``ThreadWaits``), which miss what
        threads and processes waited after their last reading before they exited
        (the ``rlimits`` mode: docs/sandbox.md).
        """
        used = self.cpu_seconds()
        if used is None:
            return None
        if self.cgroup is not None and len(self.cpus) == 1:
            stalled = self.cgroup.cpu_stall_seconds()
            if stalled is not None:
                self.waited_s = max(self.waited_s, stalled)
                return used, self.waited_s
        if self.cgroup is not None:
            pids = self.cgroup.pids()
        else:
            root = self.init_pid or (self.proc.pid if self.proc is not None else 0)
            pids = process_tree(root) if root else []
        self.waited_s = max(self.waited_s, self.thread_waits.seconds(pids))
        return used, self.waited_s

    def _read_memory_peak(self) -> None:
        peak = self.cgroup.memory_peak() if self.cgroup is not None else None
        if peak is None:
            root = self.init_pid or (self.proc.pid if self.proc is not None else 0)
            peak = process_tree_memory_peak(root) if root else 0
        self.memory_peak = max(self.memory_peak, peak)

    def is_alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def bot_spec(self, name: str = "", version: str = "") -> BotSpec:
        """The runner's view of this seat (liveness from the process, start failure)."""
        return BotSpec(
            address=self.address,
            name=name,
            version=version,
            is_alive=self.is_alive,
            start_error=self.start_error,
            cpu_usage=self.cpu_usage,
        )

    def log_bytes(self) -> bytes:
        return self.log.getvalue()

    def processes(self) -> list[int]:
        """Host pids that belong to this seat now (its PID namespace, its uid)."""
        return seat_processes(self.pid_namespace, self.uid)


# --- availability -------------------------------------------------------------------------

_checked: dict[tuple[str, str], str] = {}
_check_lock = threading.Lock()


def worker_mode() -> str:
    return "root" if os.geteuid() == 0 else "userns"


def sandbox_check(config: SandboxConfig | None = None) -> str:
    """Why hosted bots cannot be sandboxed here ("" when they can); checked once per process.

    Runs the interpreter once inside a sandbox built exactly like a seat's.
    """
    config = config or SandboxConfig()
    key = (config.bwrap, worker_mode())
    with _check_lock:
        if key in _checked:
            return _checked[key]
        _checked[key] = reason = _probe(config)
        if reason:
            log.warning("hosted bots cannot be sandboxed: %s", reason)
        return reason


def _probe(config: SandboxConfig) -> str:
    bwrap = shutil.which(config.bwrap)
    if bwrap is None:
        return f"bubblewrap ({config.bwrap}) is not installed"
    try:
        view = runtime_view()
    except ModuleNotFoundError as exc:
        return str(exc)
    try:
        seccomp = filter_fd()
    except SeccompUnavailable as exc:
        return str(exc)
    with tempfile.TemporaryDirectory(prefix="digdown-check-", dir=config.workdir) as tmp:
        argv = [bwrap, *_namespace_args(), "--seccomp", str(seccomp), *view.args()]
        argv += [view.python, "-I", "-S", "-c", "import encodings, os; print('ok')"]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                env={},
                cwd=tmp,
                timeout=CHECK_TIMEOUT_S,
                check=False,
                pass_fds=[seccomp],
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap does not run: {exc}"
        finally:
            os.close(seccomp)
    if done.returncode != 0 or done.stdout.strip() != b"ok":
        why = done.stderr.decode(errors="replace").strip()[-300:]
        cause = explain_failure(why)
        return f"bubblewrap cannot create the sandbox (exit {done.returncode}): {why}" + (
            f" - {cause}" if cause else ""
        )
    return ""


def _namespace_args() -> list[str]:
    common = [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ]
    if worker_mode() == "root":
        caps = ["CAP_SETUID", "CAP_SETGID", "CAP_CHOWN"]  # for boot.py; dropped before exec
        return [*common, "--cap-drop", "ALL", *(a for c in caps for a in ("--cap-add", c))]
    return [
        *common,
        "--unshare-user",
        *(["--disable-userns"] if userns_limit_writable() else []),
        "--uid",
        str(USERNS_UID),
        "--gid",
        str(USERNS_UID),
    ]


MAX_USERNS = Path("/proc/sys/user/max_user_namespaces")


def userns_limit_writable(path: Path = MAX_USERNS) -> bool:
    """Whether bubblewrap's ``--disable-userns`` can work here.

    It writes ``max_user_namespaces`` inside the sandbox's user namespace, and a
    container engine mounts ``/proc/sys`` read-only (Docker always does, short of
    ``privileged``), so there bubblewrap fails with "cannot open
    /proc/sys/user/max_user_namespaces: Read-only file system". It is a second lock
    only: the seat's seccomp filter (``seccomp.py``) already refuses ``unshare``,
    ``setns`` and ``clone`` with any namespace flag, so a bot cannot make a user
    namespace either way. Left out where it cannot be written; used where it can.
    """
    return os.access(path, os.W_OK)


def explain_failure(stderr: str) -> str:
    """What the operator must change, for the bubblewrap errors a container gives.

    Each is a message bubblewrap printed in a Docker container (20.10, runc, the
    worker not root), with what made it go away (docs/operations.md, "The worker
    container").
    """
    if "max_user_namespaces" in stderr:
        return "/proc/sys is read-only (a container): bubblewrap's --disable-userns cannot work"
    if "Can't mount proc" in stderr:
        return (
            "a fresh /proc cannot be mounted while the container engine masks parts of /proc: "
            "run the worker with security_opt systempaths=unconfined (docker-compose.yml does; "
            "Kubernetes: procMount Unmasked)"
        )
    if "pivot_root" in stderr or "mount" in stderr:
        return (
            "mounts are refused by the container's seccomp profile (Docker's default refuses "
            "mount and pivot_root): run the worker with security_opt seccomp=unconfined, and "
            "apparmor=unconfined where AppArmor runs"
        )
    if "No permissions to create new namespace" in stderr or "Operation not permitted" in stderr:
        return (
            "user namespaces are refused: in a container, Docker's default seccomp profile "
            "refuses them (security_opt seccomp=unconfined); on a host, allow unprivileged "
            "user namespaces (kernel.unprivileged_userns_clone=1, "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return ""


# --- uids and processes -------------------------------------------------------------------


@contextlib.contextmanager
def _uid_lease(config: SandboxConfig) -> Iterator[int]:
    """An unused uid of ``config.uids`` for one seat, held by a lock file until the end."""
    lock_dir = Path(config.workdir or tempfile.gettempdir()) / "digdown-sandbox-uids"
    lock_dir.mkdir(mode=0o700, exist_ok=True)
    st = lock_dir.lstat()
    if st.st_uid != os.geteuid() or st.st_mode & 0o022 or not lock_dir.is_dir():
        raise SandboxUnavailable(f"{lock_dir} is not a private directory of this user")
    busy = _uids_in_use()
    start = int.from_bytes(os.urandom(4), "little") % len(config.uids)
    for i in range(min(len(config.uids), 256)):
        uid = config.uids[(start + i) % len(config.uids)]
        if uid in busy:
            continue
        fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield uid
        finally:
            os.close(fd)
        return
    raise SandboxUnavailable("no free sandbox uid")


def _uids_in_use() -> set[int]:
    uids = set()
    for pid in _pids():
        with contextlib.suppress(OSError):
            uids.add(os.stat(f"/proc/{pid}").st_uid)
    return uids


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def seat_processes(pid_namespace: int, uid: int | None) -> list[int]:
    """Host pids in PID namespace ``pid_namespace`` or (when given) running as ``uid``."""
    found = []
    for pid in _pids():
        try:
            by_uid = uid is not None and os.stat(f"/proc/{pid}").st_uid == uid
            if by_uid or (pid_namespace and os.stat(f"/proc/{pid}/ns/pid").st_ino == pid_namespace):
                found.append(pid)
        except OSError:
            continue
    return found


# --- one seat -------------------------------------------------------------------------------


def _bot_env(lib_path: str, scratch: str, listen: str) -> dict[str, str]:
    """The bot's whole environment: nothing of the worker's (no secrets)."""
    return {
        "PYTHONPATH": f"{scratch}:{lib_path}",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": scratch,
        "TMPDIR": f"{scratch}/tmp",
        "LANG": "C.UTF-8",
        "DIGDOWN_LISTEN": listen,
        "MALLOC_ARENA_MAX": "2",  # glibc: fewer 64 MiB arenas reserved against RLIMIT_AS
    }


def _sandbox_argv(
    seat_dir: Path,
    boot_config: dict,
    fds: tuple[int, int],
    limits: SandboxLimits,
    bwrap: str,
) -> list[str]:
    """bubblewrap's command line; ``fds`` are its info descriptor and the seccomp program's."""
    view = runtime_view()
    info_fd, seccomp_fd = fds
    return [
        bwrap,
        *_namespace_args(),
        "--info-fd",
        str(info_fd),
        "--seccomp",
        str(seccomp_fd),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(1024 * 1024),
        "--tmpfs",
        "/dev/shm",
        *view.args(),
        "--ro-bind",
        str(seat_dir / "bundle"),
        BUNDLE,
        "--size",
        str(limits.scratch_bytes),
        "--perms",
        "0700",
        "--tmpfs",
        SCRATCH,
        "--symlink",
        f"{SCRATCH}/tmp",
        "/tmp",
        "--perms",
        "0755",
        "--dir",
        str(Path(SOCKET_DIR).parent),
        "--bind",
        str(seat_dir / "run"),
        SOCKET_DIR,
        "--chdir",
        "/",
        view.python,
        "-I",
        "-S",
        BOOT,
        json.dumps(boot_config),
    ]


def _read_info(fd: int, proc: subprocess.Popen[bytes], timeout_s: float) -> dict:
    """bubblewrap's --info-fd document (host pid of the sandbox init, namespace ids)."""
    deadline = time.monotonic() + timeout_s
    buf = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
            with contextlib.suppress(ValueError):
                return json.loads(buf)
        elif proc.poll() is not None:
            break
    return {}


def _describe_exit(code: int | None, limits: SandboxLimits) -> str:
    if code is None:
        return "still running"
    sig = -code if code < 0 else code - 128 if code > 128 else 0
    if sig:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig
        extra = f" (CPU time limit {limits.cpu_s} s)" if sig == signal.SIGXCPU else ""
        return f"killed by {name}{extra}"
    if code == 70:
        return "exited with status 70 (sandbox boot or the bot failed)"
    return f"exited with status {code}"


def _unsafe_lib(seat_dir: Path, packages: list[tuple[str, str]]) -> str:
    """Unsafe mode: the allowed packages as symlinks in one directory (no isolation!)."""
    lib = seat_dir / "lib"
    for dest, source in packages:
        target = lib / dest.removeprefix(LIB_DIR + "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)
    return str(lib)


@contextlib.contextmanager
def hosted_seat(
    bundle: Bundle, limits: SandboxLimits | None = None, config: SandboxConfig | None = None
) -> Iterator[HostedSeat]:
    """Start ``bundle`` as one sandboxed seat; kill it (and every child) when the block ends.

    A bot that cannot start (bad archive, crash, not serving within
    ``limits.start_s``) still yields a seat, with ``start_error`` set, so that
    the match goes on and the seat forfeits with that reason. Raises
    ``SandboxUnavailable`` only when this worker cannot sandbox at all.
    """
    with hosted_seats([bundle], limits, config) as seats:
        yield seats[0]


@contextlib.contextmanager
def hosted_seats(
    bundles: Sequence[Bundle],
    limits: SandboxLimits | None = None,
    config: SandboxConfig | None = None,
) -> Iterator[list[HostedSeat]]:
    """``hosted_seat`` for several seats of one match, started side by side."""
    limits = limits or SandboxLimits()
    config = config or SandboxConfig()
    reason = sandbox_check(config)
    if reason and not config.unsafe_dev_mode:
        raise SandboxUnavailable(
            f"hosted bots cannot run on this worker: {reason}. Install bubblewrap (and allow "
            "user namespaces unless the worker is root), or, for development only and with no "
            "isolation at all, turn on unsafe development mode"
        )
    mode = "unsafe" if reason else worker_mode()
    with contextlib.ExitStack() as stack:
        launched = [_launch(b, mode, limits, config, stack) for b in bundles]
        waiting = [(seat, started) for seat, started in launched if seat.proc is not None]
        if waiting:
            with ThreadPoolExecutor(len(waiting), thread_name_prefix="sandbox-start") as pool:
                list(pool.map(lambda w: _await_start(w[0], w[1], limits), waiting))
        for seat, _ in launched:
            if not seat.start_error:
                timer = threading.Timer(limits.wall_s, _kill, (seat, "wall-clock limit reached"))
                timer.daemon = True
                timer.start()
                stack.callback(timer.cancel)
        yield [seat for seat, _ in launched]


def _launch(
    bundle: Bundle,
    mode: str,
    limits: SandboxLimits,
    config: SandboxConfig,
    stack: contextlib.ExitStack,
) -> tuple[HostedSeat, float]:
    """Unpack the bot and start its sandbox (not waiting for it); ``stack`` ends it."""
    started = time.monotonic()
    seat_dir = Path(tempfile.mkdtemp(prefix="digdown-seat-", dir=config.workdir))
    stack.callback(shutil.rmtree, seat_dir, True)
    (seat_dir / "bundle").mkdir(mode=0o755)
    run_dir = seat_dir / "run"
    run_dir.mkdir(mode=0o700)
    seat = HostedSeat(
        address=f"unix:{run_dir}/bot.sock", log=CappedLog(limits.log_bytes), mode=mode
    )
    try:
        entry = bundle.unpack(seat_dir / "bundle")
    except (BundleError, OSError) as exc:
        seat.start_error = f"not started: {exc}"
        seat.log.note(seat.start_error)
        return seat, started
    if mode == "root":
        seat.uid = stack.enter_context(_uid_lease(config))
        os.chown(run_dir, seat.uid, seat.uid)
    view = runtime_view()
    if mode == "unsafe":
        packages = [(m.dest, m.source) for m in view.mounts if m.dest.startswith(LIB_DIR + "/")]
        scratch = str(seat_dir / "bot")
        os.mkdir(scratch, 0o700)
        listen = seat.address
        env = _bot_env(_unsafe_lib(seat_dir, packages), scratch, listen)
        bundle_dir, boot = str(seat_dir / "bundle"), str(Path(__file__).with_name("boot.py"))
    else:
        scratch, listen, bundle_dir, boot = SCRATCH, LISTEN, BUNDLE, BOOT
        env = _bot_env(LIB_DIR, SCRATCH, LISTEN)
    support = cgroup_support(config.cgroup)
    if support.mode != "rlimits":
        try:
            seat.cgroup = SeatCgroup(
                support,
                memory_bytes=limits.memory_bytes,
                processes=limits.processes,
                cpus=limits.cpus,
            )
        except OSError as exc:
            log.warning("hosted seat without its cgroup (rlimits only): %s", exc)
    if seat.cgroup is not None:
        stack.callback(seat.cgroup.close)  # after _stop, which reads it last
    if seat.cgroup is not None and limits.cpus <= 1 and seat.cgroup.cpu_stall_seconds() is not None:
        # Its CPU stall is the clock's measure: exact on one CPU (pinning.py).
        seat.cpus = pinning.take()
        stack.callback(pinning.give_back, seat.cpus)
    boot_config = {
        "uid": seat.uid,
        "gid": seat.uid,
        "scratch": scratch,
        "bundle": bundle_dir,
        "limits": limits.rlimits(),
        "argv": [view.python, "-S", "-B", f"{scratch}/{entry}", "--listen", listen],
        "env": env,
        "cpus": seat.cpus,
    }
    if mode == "unsafe":
        seat.log.note("UNSAFE development mode: this bot runs WITHOUT any isolation")
        argv = [view.python, "-I", "-S", boot, json.dumps(boot_config)]
        info_r = info_w = seccomp = -1
    else:
        info_r, info_w = os.pipe()
        seccomp = filter_fd()
        argv = _sandbox_argv(seat_dir, boot_config, (info_w, seccomp), limits, config.bwrap)
    if seat.cgroup is not None:
        # Enter the seat's cgroup before bubblewrap starts, so every process of the
        # sandbox is born in it (a move afterwards could miss a fast fork).
        argv = ["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', seat.cgroup.procs, *argv]
    try:
        seat.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={},
            cwd=seat_dir,
            pass_fds=[info_w, seccomp] if info_w >= 0 else [],
            start_new_session=True,
        )
    finally:
        if info_w >= 0:
            os.close(info_w)
            os.close(seccomp)
    if seat.cpus:  # bubblewrap too (boot.py pins the bot, whatever was forked before this)
        with contextlib.suppress(OSError):
            os.sched_setaffinity(seat.proc.pid, seat.cpus)
    stack.callback(_stop, seat, limits)
    assert seat.proc.stdout is not None
    seat.log.drain(seat.proc.stdout)
    if info_r >= 0:
        try:
            info = _read_info(info_r, seat.proc, limits.start_s)
        finally:
            os.close(info_r)
        seat.init_pid = int(info.get("child-pid", 0))
        seat.pid_namespace = int(info.get("pid-namespace", 0))
    return seat, started


def _await_start(seat: HostedSeat, started: float, limits: SandboxLimits) -> None:
    """Wait for the bot's health service; a bot that does not serve in time is killed."""
    assert seat.proc is not None
    remaining = max(0.1, limits.start_s - (time.monotonic() - started))
    try:
        wait_until_serving(seat.address, BOT_SERVICE, remaining, alive=seat.is_alive)
    except ChildProcessError:
        seat.proc.wait(KILL_WAIT_S)
        seat.start_error = f"not started: the bot {_describe_exit(seat.proc.returncode, limits)}"
    except TimeoutError:
        seat.start_error = f"not started: not serving within {limits.start_s:g} s"
        seat.start_timed_out = True
        with contextlib.suppress(OSError):
            seat.cpu_usage()  # before the kill: its CPU time and its wait for a CPU
    seat.start_s = time.monotonic() - started
    if seat.start_error:
        seat.log.note(seat.start_error)
        _kill(seat, "")
    else:
        seat.log.note(f"serving after {seat.start_s:.2f} s ({seat.mode} sandbox)")
        if seat.uid is not None:
            # Its socket is bound: the directory shared with the worker takes nothing more
            # (no filling the worker's disk through it).
            run_dir = Path(seat.address.removeprefix("unix:")).parent
            os.chown(run_dir, os.geteuid(), os.getegid())
            os.chmod(run_dir, 0o755)
    log.info("hosted seat %s: %s", seat.address, seat.start_error or "serving")


def _kill(seat: HostedSeat, why: str) -> None:
    """SIGKILL the sandbox's PID-namespace init: every process of the bot dies with it.

    The init is killed rather than the outer bubblewrap so that the outer one
    reaps it and exits by itself: killed first, it would leave the init as a
    zombie for the machine's init to reap. While the outer process runs, the
    init's pid cannot have been reused (it is its child, reaped only by it).
    """
    proc = seat.proc
    if proc is None or proc.poll() is not None:
        return
    if why:
        seat.log.note(f"killed: {why}")
        seat.killed_why = why
    with contextlib.suppress(ProcessLookupError):
        if seat.mode == "unsafe":
            os.killpg(proc.pid, signal.SIGKILL)
            return
        if seat.init_pid:
            os.kill(seat.init_pid, signal.SIGKILL)
            try:
                proc.wait(KILL_WAIT_S)
                return
            except subprocess.TimeoutExpired:
                log.error("sandbox %s outlived its init by %s s", proc.pid, KILL_WAIT_S)
        proc.kill()


def _stop(seat: HostedSeat, limits: SandboxLimits) -> None:
    proc = seat.proc
    if proc is None:
        return
    exited = proc.poll()
    seat.cpu_seconds()  # the last readings, while its processes are there to read
    seat._read_memory_peak()
    _kill(seat, "")
    if seat.cgroup is not None:
        seat.cgroup.kill()
    try:
        proc.wait(KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        log.error("sandbox %s did not die within %s s", proc.pid, KILL_WAIT_S)
    if not seat.start_error:
        if exited is None:
            seat.ended = "stopped at the end of the match"
        else:
            seat.ended = _describe_exit(exited, limits)
            seat.log.note(f"the bot {seat.ended} before the end of the match")
    seat.log.note(_end_line(seat, exited, limits))
    seat.log.join(KILL_WAIT_S)
    if proc.stdout is not None:
        proc.stdout.close()
    seat.leftovers = _reap_leftovers(seat)


def _end_line(seat: HostedSeat, exited: int | None, limits: SandboxLimits) -> str:
    """The log's last word on the seat: how it ended, the limit it hit, what it used."""
    if seat.cgroup is not None:
        cpu = seat.cgroup.cpu_seconds()
        seat.cpu_s = max(seat.cpu_s, cpu or 0.0)
        peak = seat.cgroup.memory_peak()
        seat.memory_peak = max(seat.memory_peak, peak or 0)
    how = seat.start_error or (
        "stopped by the worker at the end of the match"
        if exited is None
        else f"the bot {_describe_exit(exited, limits)}"
    )
    hit = seat.cgroup.limits_hit() if seat.cgroup is not None else []
    sig = -exited if exited is not None and exited < 0 else (exited or 0) - 128
    if sig == signal.SIGXCPU:
        hit.append(f"RLIMIT_CPU ({limits.cpu_s} s)")
    if seat.killed_why:
        hit.append(seat.killed_why)
    mode = "cgroup" if seat.cgroup is not None and seat.cgroup.limited else "rlimits"
    line = (
        f"ended: {how}; CPU {seat.cpu_s:.2f} s, memory peak "
        f"{seat.memory_peak / (1024 * 1024):.1f} MiB ({mode} limits)"
    )
    return line + (f"; limit hit: {', '.join(hit)}" if hit else "")


def _reap_leftovers(seat: HostedSeat) -> list[int]:
    """Processes of the seat still there after its sandbox died: kill them, report them."""
    if seat.mode == "unsafe":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(seat.proc.pid if seat.proc else 0, signal.SIGKILL)
        return []
    deadline = time.monotonic() + KILL_WAIT_S
    left = seat.processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.05)  # the kernel tears the namespace down asynchronously
        left = seat.processes()
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if left:
        log.error("hosted seat left processes %s behind; killed them", left)
        seat.log.note(f"processes left after the sandbox ended, killed: {left}")
    return left
