"""Stage 0 inside the sandbox: drop to the seat's uid, copy the bot in, set limits, exec it.

bubblewrap has built the namespaces and the filesystem view when this runs
(``python -I -S /sandbox/boot.py CONFIG``, standard library only). What is left
must happen in the sandboxed process itself, in this order, before any code of
the bot runs:

1. as root (a root worker; bwrap left it CAP_SETUID, CAP_SETGID and CAP_CHOWN
   only): hand the scratch directory to the seat's uid, then drop every group
   and switch real, effective and saved ids to it, which clears the
   capabilities; check that none is left;
2. copy the unpacked bot (read-only ``/bundle``) into its writable scratch
   directory ``/bot`` (a size-capped tmpfs);
3. resource limits (they are inherited across exec and cannot be raised
   again without a capability the bot does not have), nice, the CPUs it runs
   on (where the launcher chose them: the CPU clock's measure, see
   ``workers/sandbox/pinning.py``), close every inherited descriptor but stdio;
4. exec the bot's interpreter with the environment the launcher chose.

Any failure exits with status 70 and a ``[sandbox]`` line on stderr, which the
launcher's captured log shows the bot's owner.
"""

import json
import os
import resource
import shutil
import sys

EX_SOFTWARE = 70
LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "open_files": resource.RLIMIT_NOFILE,
    "file_size_bytes": resource.RLIMIT_FSIZE,
    "processes": resource.RLIMIT_NPROC,
}
CPU_KILL_AFTER_S = 2  # SIGXCPU at the soft limit, SIGKILL at the hard one


def fail(message: str) -> None:
    sys.stderr.write(f"[sandbox] boot failed: {message}\n")
    sys.stderr.flush()
    os._exit(EX_SOFTWARE)


def effective_capabilities() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return -1


def drop_to(uid: int, gid: int, scratch: str) -> None:
    os.chown(scratch, uid, gid)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getgroups() or effective_capabilities() != 0:
        fail("could not drop privileges")


def copy_bundle(source: str, scratch: str) -> None:
    for name in os.listdir(source):
        src, dst = os.path.join(source, name), os.path.join(scratch, name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=False)
        else:
            shutil.copyfile(src, dst)
    os.makedirs(os.path.join(scratch, "tmp"), exist_ok=True)


def set_limits(limits: dict) -> None:
    for name, which in LIMITS.items():
        value = int(limits[name])
        hard = value + CPU_KILL_AFTER_S if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.get("nice"):
        os.nice(int(limits["nice"]))


def main() -> None:
    try:
        config = json.loads(sys.argv[1])
        scratch = config["scratch"]
        if config.get("uid") is not None:
            drop_to(config["uid"], config["gid"], scratch)
        copy_bundle(config["bundle"], scratch)
        set_limits(config["limits"])
        if config.get("cpus"):
            os.sched_setaffinity(0, config["cpus"])
        os.closerange(3, 1 << 16)
        os.chdir(scratch)
        argv = config["argv"]
        os.execve(argv[0], argv, config["env"])
    except Exception as exc:  # any failure here is reported the same way
        fail(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    main()
