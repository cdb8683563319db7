"""A stand-in for `systemctl` on a CI machine where systemd is not PID 1.

It runs the units that docs/deploy.md installs the way systemd would, as far as they use it:
User=/Group=, WorkingDirectory=, EnvironmentFile= read by systemd's rules (systemd.exec(5): only a
line that *starts* with # or ; is a comment, and an unquoted value keeps a `# ...` after it),
Environment=, a clean environment, Type=notify (start returns when the service says READY=1),
PrivateTmp=, ProtectSystem=strict with ReadWritePaths= (a missing path fails with
226/NAMESPACE, as systemd does), NoNewPrivileges=, ExecReload= with $MAINPID, a new main process
announced with MAINPID= under NotifyAccess=all (gunicorn's reload by USR2: the stand-in waits
for it, where systemd would take it whenever it comes), and a timer's `enable --now` runs its
service once. Units other than this run's (nginx) are checked, not run.

usage: systemctl daemon-reload | enable --now UNIT | start|stop|restart|reload UNIT
       systemctl show-env UNIT      (the environment the service would get, NAME=value lines)
Environment: STANDIN_STATE (a folder for pids, logs and the notify socket), STANDIN_UNITS (the
folder of unit files, /etc/systemd/system), STANDIN_PREFIX (the names of this run's units).
"""

from __future__ import annotations

import contextlib
import ctypes
import grp
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(os.environ.get("STANDIN_STATE", "/run/systemd-standin"))
UNITS = Path(os.environ.get("STANDIN_UNITS", "/etc/systemd/system"))
PREFIX = os.environ.get("STANDIN_PREFIX", "")
API_FILESYSTEMS = ("/proc", "/sys", "/dev")


def say(message: str) -> None:
    print(f"[systemctl stand-in] {message}", file=sys.stderr, flush=True)


def parse_unit(path: Path) -> dict[str, list[str]]:
    """The [Service] (and [Timer]) settings of a unit file, each key with all its values."""
    settings: dict[str, list[str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        settings.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return settings


def parse_environment_file(path: Path) -> dict[str, str]:
    """NAME=value lines as systemd reads them (not as a shell would)."""
    env: dict[str, str] = {}
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip(" \t\r")
        i += 1
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i].strip(" \t\r")
            i += 1
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.lstrip(" \t")
        if value[:1] in {"'", '"'} and value.endswith(value[0]) and len(value) > 1:
            env[key.strip()] = value[1:-1]
        else:
            env[key.strip()] = value.rstrip(" \t")
    return env


def service_environment(unit: dict[str, list[str]]) -> dict[str, str]:
    user = pwd.getpwnam(unit["Service.User"][-1]) if "Service.User" in unit else pwd.getpwuid(0)
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "HOME": user.pw_dir,
        "USER": user.pw_name,
        "LOGNAME": user.pw_name,
        "SHELL": user.pw_shell,
    }
    for name in unit.get("Service.EnvironmentFile", []):
        optional = name.startswith("-")
        path = Path(name.lstrip("-"))
        if path.exists():
            env |= parse_environment_file(path)
        elif not optional:
            raise SystemExit(f"EnvironmentFile={path}: No such file (status=1/FAILURE)")
    for assignment in unit.get("Service.Environment", []):
        for word in assignment.split():
            key, _, value = word.partition("=")
            env[key] = value
    return env


def command_words(line: str, mainpid: int | None = None) -> list[str]:
    line = line.lstrip("-@:+!")
    if mainpid is not None:
        line = line.replace("$MAINPID", str(mainpid))
    return line.split()


MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}


def mount(libc, source: str | None, target: str, fstype: str | None, flags: int, data=None):
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}: {os.strerror(ctypes.get_errno())}")


def enter_sandbox(unit: dict[str, list[str]]) -> None:
    """In a new mount namespace: ProtectSystem=strict, ReadWritePaths=, PrivateTmp=; then the
    unit's user, no new privileges and its working directory. Runs in the child, as root."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.unshare(os.CLONE_NEWNS)
    mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    kept: list[str] = []
    for entry in " ".join(unit.get("Service.ReadWritePaths", [])).split():
        path = entry.lstrip("-")
        if not os.path.exists(path):
            if entry.startswith("-"):
                continue
            os.write(
                2,
                f"Failed to set up mount namespacing: {path}: No such file or "
                "directory (status=226/NAMESPACE)\n".encode(),
            )
            os._exit(226)
        mount(libc, path, path, None, MS_BIND)
        kept.append(path)
    if unit.get("Service.PrivateTmp", ["no"])[-1] in {"true", "yes", "1", "on"}:
        for path in ("/tmp", "/var/tmp"):
            mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
            kept.append(path)
    if unit.get("Service.ProtectSystem", ["no"])[-1] == "strict":
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            target, options = fields[4], fields[5].split(",")
            if target in kept or target.startswith(API_FILESYSTEMS) or target == "/run":
                continue
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY
            for option in options:
                flags |= MOUNT_FLAGS.get(option, 0)
            mount(libc, None, target, None, flags)
    user = pwd.getpwnam(unit["Service.User"][-1]) if "Service.User" in unit else pwd.getpwuid(0)
    group = unit.get("Service.Group", [None])[-1]
    gid = grp.getgrnam(group).gr_gid if group else user.pw_gid
    os.setgroups([])
    os.setgid(gid)
    os.setuid(user.pw_uid)
    if unit.get("Service.NoNewPrivileges", ["no"])[-1] in {"true", "yes", "1", "on"}:
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    os.chdir(unit.get("Service.WorkingDirectory", [user.pw_dir])[-1])


def run_in_sandbox(name: str, words: list[str], env: dict[str, str], log) -> subprocess.Popen:
    unit = parse_unit(UNITS / name)
    return subprocess.Popen(
        words,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: enter_sandbox(unit),
        start_new_session=True,
    )


def pid_file(name: str) -> Path:
    return STATE / f"{name}.pid"


def main_pid(name: str) -> int | None:
    path = pid_file(name)
    if not path.exists():
        return None
    pid = int(path.read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def start(name: str) -> None:
    if name.endswith(".timer"):
        service = name.removesuffix(".timer") + ".service"
        say(f"{name}: enabled; running {service} once, as the timer would")
        start(service)
        return
    if main_pid(name):
        return
    unit = parse_unit(UNITS / name)
    env = service_environment(unit)
    kind = unit.get("Service.Type", ["simple"])[-1]
    STATE.mkdir(parents=True, exist_ok=True)
    log = open(STATE / f"{name}.log", "ab")  # noqa: SIM115 (closed below, kept by the child)
    if kind == "oneshot":
        for line in unit["Service.ExecStart"]:
            code = run_in_sandbox(name, command_words(line), env, log).wait()
            if code != 0:
                log.close()
                say(f"{name}: {line} exited {code}; its log:")
                sys.stderr.write((STATE / f"{name}.log").read_text())
                raise SystemExit(f"Job for {name} failed (status={code})")
        log.close()
        say(f"{name}: ran {len(unit['Service.ExecStart'])} command(s), all succeeded")
        return
    notify = None
    if kind == "notify":
        notify = notify_socket(name)
        env["NOTIFY_SOCKET"] = str(STATE / f"{name}.notify")
    process = run_in_sandbox(name, command_words(unit["Service.ExecStart"][-1]), env, log)
    log.close()
    pid_file(name).write_text(str(process.pid))
    if notify is None:
        say(f"{name}: started, main PID {process.pid}")
        return
    notify.settimeout(0.5)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if b"READY=1" in notify.recv(4096):
                say(f"{name}: started, main PID {process.pid}, ready (sd_notify)")
                return
        except TimeoutError:
            pass
        if process.poll() is not None:
            break
    sys.stderr.write((STATE / f"{name}.log").read_text())
    raise SystemExit(f"Job for {name} failed: status={process.poll()}, never said READY=1")


def notify_socket(name: str) -> socket.socket:
    address = STATE / f"{name}.notify"
    address.unlink(missing_ok=True)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(address))
    os.chmod(address, 0o777)
    return notify


def stop(name: str) -> None:
    pid = main_pid(name)
    if pid is None:
        return
    unit = parse_unit(UNITS / name)
    timeout = float(unit.get("Service.TimeoutStopSec", ["90"])[-1])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # KillMode=mixed: what is left of the group
    pid_file(name).unlink(missing_ok=True)
    say(f"{name}: stopped")


def reload(name: str) -> None:
    pid = main_pid(name)
    if pid is None:
        raise SystemExit(f"{name} is not active, cannot reload.")
    unit = parse_unit(UNITS / name)
    if "Service.ExecReload" not in unit:
        raise SystemExit(f"Failed to reload {name}: Job type reload is not applicable for unit.")
    user = unit.get("Service.User", ["root"])[-1]
    announces = unit.get("Service.NotifyAccess", ["main"])[-1] == "all"
    notify = notify_socket(name) if announces else None
    for line in unit["Service.ExecReload"]:
        subprocess.run(command_words(line, pid), user=user, check=True)
    say(f"{name}: reloaded ({' '.join(command_words(unit['Service.ExecReload'][-1], pid))})")
    if notify is None:
        return
    # The process that takes over as the main one says MAINPID=. If none does (the new code
    # failed to start), the old one goes on serving; this reload is then reported as failed.
    notify.settimeout(0.5)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            message = notify.recv(4096).decode()
        except TimeoutError:
            continue
        for line in message.splitlines():
            if line.startswith("MAINPID="):
                pid_file(name).write_text(line.removeprefix("MAINPID="))
                say(f"{name}: main PID is now {line.removeprefix('MAINPID=')}")
                return
    raise SystemExit(f"{name}: no new main process announced itself within 120 s of the reload")


def unit_name(name: str) -> str:
    return name if name.endswith((".service", ".timer")) else f"{name}.service"


def main(args: list[str]) -> None:
    args = [a for a in args if a not in {"--now", "--no-pager", "-q", "--quiet"}]
    verb, names = args[0], [unit_name(n) for n in args[1:]]
    if verb == "daemon-reload":
        return
    for name in names:
        if not (PREFIX and name.startswith(PREFIX)):
            if verb == "reload" and name == "nginx.service":
                subprocess.run(["nginx", "-t", "-q"], check=True)
                say("nginx.service: configuration checked (nginx -t); not run here")
                continue
            raise SystemExit(f"the stand-in manages only this run's units, not {name}")
        if verb in {"enable", "start"}:
            start(name)
        elif verb == "stop":
            stop(name)
        elif verb == "restart":
            stop(name)
            start(name)
        elif verb == "reload":
            reload(name)
        elif verb == "show-env":
            for key, value in service_environment(parse_unit(UNITS / name)).items():
                print(f"{key}={value}")
        else:
            raise SystemExit(f"the stand-in does not know `systemctl {verb}`")


if __name__ == "__main__":
    main(sys.argv[1:])
