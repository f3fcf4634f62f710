"""N Streamlit replicas of the lab on loopback ports with nginx in front, supervised.

    python deploy/cluster.py --replicas 3 --port 8500          # what `make cluster` runs
    python deploy/cluster.py stop                              # what `make cluster-stop` runs
    python deploy/cluster.py render --replicas 3 --port 80 --upstream-host app > nginx.conf

`up` (the default) starts each replica with `make run`'s command line (the port and the address
differ), waits for every /_stcore/health, renders deploy/nginx.conf.in into the run folder and
starts nginx there in the foreground (its own prefix, pid, logs and temp folders, so no system
nginx file is read or written). Then it polls every replica's /_stcore/health and logs changes
until Ctrl-C, SIGTERM (`stop`) or nginx exiting; on the way out it stops nginx and every
replica and waits for them. Children get SIGTERM from the kernel if this process dies without
cleaning up (PR_SET_PDEATHSIG), and `stop` kills any recorded child still alive, so no replica
outlives the cluster. `--nginx off` runs the replicas only (docker compose, where nginx is a
second container).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "deploy" / "nginx.conf.in"
DEFAULT_DIR = ROOT / "run" / "cluster"
HEALTH_TIMEOUT_S = 180  # first start on a loaded 2-core machine: N replicas import torch at once
POLL_S = 3.0
STOP_GRACE_S = 15.0
PR_SET_PDEATHSIG = 1


@dataclass
class Child:
    """One process this supervisor started: a replica or nginx."""

    name: str
    proc: subprocess.Popen
    health: str | None  # URL answering "ok" while it is well; None for nginx
    up: bool = False
    gone: bool = False  # exited, and the exit has been logged


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGTERM it when the supervisor dies, however it dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def healthy(url: str, timeout: float = 2.0) -> bool:
    """True when `url` answers 200 with the body "ok" (Streamlit's /_stcore/health)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except OSError:
        return False


def replica_command(python: str, port: int, address: str) -> list[str]:
    """`make run`'s command line (ui/serve.py: Streamlit's, after a warm-up), on
    `address`:`port`."""
    return [python, "-m", "ui.serve", "run", "app.py", "--server.headless", "true",
            "--server.port", str(port), "--server.address", address,
            "--browser.gatherUsageStats", "false"]


def find_nginx() -> str | None:
    """nginx on PATH, or Debian's /usr/sbin/nginx (not on a normal user's PATH)."""
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def render(ports: list[int], listen: str, upstream_host: str = "127.0.0.1",
           run_dir: Path | None = None, daemon: bool = False) -> str:
    """deploy/nginx.conf.in with its @NAME@ placeholders filled in.

    With `run_dir`, pid, logs and temp files live under it and no `user` is named (nginx started
    by a normal user keeps its own; as root it drops workers to nobody, see _prepare_dir); without,
    the standard paths of the official nginx image (for docker compose).
    """
    servers = "\n".join(f"        server {upstream_host}:{p} max_fails=1 fail_timeout=10s;"
                        for p in ports)
    if run_dir is not None:
        paths = {"PID": run_dir / "nginx.pid", "ERROR_LOG": run_dir / "nginx-error.log",
                 "ACCESS_LOG": run_dir / "nginx-access.log", "TEMP": run_dir / "nginx-temp",
                 "USER": "# user: the one who started it (workers drop to nobody under root)"}
    else:
        paths = {"PID": "/var/run/nginx.pid", "ERROR_LOG": "/dev/stderr",
                 "ACCESS_LOG": "/dev/stdout", "TEMP": "/var/cache/nginx",
                 "USER": "user nginx;"}
    values = {**{k: str(v) for k, v in paths.items()}, "SERVERS": servers, "LISTEN": listen,
              "DAEMON": "on" if daemon else "off"}
    text = TEMPLATE.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    if "@" in "".join(line.split("#")[0] for line in text.splitlines()):
        raise ValueError("a placeholder of deploy/nginx.conf.in was left unfilled")
    return text


def _prepare_dir(run_dir: Path) -> None:
    """The run folder, readable by nginx's workers (nobody) when nginx starts as root."""
    (run_dir / "nginx-temp").mkdir(parents=True, exist_ok=True)
    for d in (run_dir, run_dir / "nginx-temp"):
        d.chmod(0o755)
    for old in run_dir.glob("*.log"):
        old.unlink()


def _log(msg: str) -> None:
    print(f"[cluster {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _alive_as(pid: int, marker: str) -> bool:
    """Whether `pid` runs and its command line contains `marker` (guards against pid reuse)."""
    try:
        return marker in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False


class Cluster:
    """Replicas, nginx, and the loop that watches them; `close()` stops all of them."""

    def __init__(self, replicas: int, port: int, first_port: int, run_dir: Path,
                 address: str, nginx: bool, python: str) -> None:
        self.ports = [first_port + i for i in range(replicas)]
        self.port, self.run_dir, self.address = port, run_dir, address
        self.use_nginx, self.python = nginx, python
        self.children: list[Child] = []
        self.stopping = False

    def _spawn(self, name: str, cmd: list[str], health: str | None, env: dict) -> Child:
        log = open(self.run_dir / f"{name}.log", "ab")
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent,
                                start_new_session=True)  # Ctrl-C reaches only this supervisor
        log.close()
        child = Child(name, proc, health)
        self.children.append(child)
        self._write_pids()
        return child

    def _write_pids(self) -> None:
        lines = [f"{c.proc.pid} {c.name}" for c in self.children]
        (self.run_dir / "children.pids").write_text("\n".join(lines) + "\n")

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        # One secret for every replica (Streamlit signs its cookies with it), from the
        # environment rather than the command line, so `ps` does not show it.
        env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
        for i, port in enumerate(self.ports):
            host = "127.0.0.1" if self.address in ("0.0.0.0", "::") else self.address
            self._spawn(f"replica-{i}", replica_command(self.python, port, self.address),
                        f"http://{host}:{port}/_stcore/health", env)
            _log(f"replica-{i}: pid {self.children[-1].proc.pid}, port {port}")
        self._wait_healthy([c for c in self.children if c.health])
        if self.use_nginx:
            self._start_nginx()

    def _wait_healthy(self, children: list[Child]) -> None:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        pending = list(children)
        while pending:
            for c in list(pending):
                if c.proc.poll() is not None:
                    raise RuntimeError(f"{c.name} exited with code {c.proc.returncode} while "
                                       f"starting; see {self.run_dir / (c.name + '.log')}")
                if healthy(c.health):
                    c.up = True
                    pending.remove(c)
                    _log(f"{c.name}: healthy")
            if pending and time.monotonic() > deadline:
                raise RuntimeError(f"{', '.join(c.name for c in pending)} not healthy after "
                                   f"{HEALTH_TIMEOUT_S} s; logs in {self.run_dir}")
            time.sleep(0.5)

    def _start_nginx(self) -> None:
        nginx = find_nginx()
        if nginx is None:
            raise RuntimeError("nginx is not installed: `make cluster` installs it "
                               "(apt-get install nginx)")
        conf = self.run_dir / "nginx.conf"
        conf.write_text(render(self.ports, f"{self.port}", run_dir=self.run_dir))
        base = [nginx, "-p", str(self.run_dir), "-c", str(conf), "-e", "stderr"]
        test = subprocess.run(base + ["-t", "-q"], capture_output=True, text=True)
        if test.returncode != 0:
            raise RuntimeError(f"nginx rejected {conf}:\n{test.stderr}")
        child = self._spawn("nginx", base, f"http://127.0.0.1:{self.port}/healthz",
                            dict(os.environ))
        self._wait_healthy([child])
        _log(f"nginx: pid {child.proc.pid}, http://localhost:{self.port}/ -> replicas on ports "
             f"{', '.join(map(str, self.ports))}; logs in {self.run_dir}")

    def watch(self) -> int:
        """Poll until asked to stop; returns the exit code."""
        _log("up; Ctrl-C or `make cluster-stop` stops everything")
        while not self.stopping:
            for c in self.children:
                if c.proc.poll() is not None:
                    if c.name == "nginx":
                        _log(f"nginx exited with code {c.proc.returncode}: stopping the cluster")
                        return 1
                    if not c.gone:
                        _log(f"{c.name} (pid {c.proc.pid}) exited with code "
                             f"{c.proc.returncode}; nginx sends its sessions to the others")
                    c.up, c.gone = False, True
                    continue
                if c.health is None:
                    continue
                now = healthy(c.health)
                if now != c.up:
                    state = "healthy again" if now else "not answering its health check"
                    _log(f"{c.name}: {state}")
                    c.up = now
            end = time.monotonic() + POLL_S
            while not self.stopping and time.monotonic() < end:
                time.sleep(0.1)
        return 0

    def close(self) -> None:
        """SIGTERM nginx first (no new requests), then the replicas; SIGKILL what lingers."""
        self.stopping = True
        for c in sorted(self.children, key=lambda c: c.name != "nginx"):
            if c.proc.poll() is None:
                c.proc.send_signal(signal.SIGQUIT if c.name == "nginx" else signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for c in self.children:
            try:
                c.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _log(f"{c.name} did not stop within {STOP_GRACE_S:g} s: SIGKILL")
                c.proc.kill()
                c.proc.wait()
        _log("stopped: " + ", ".join(f"{c.name} ({c.proc.returncode})" for c in self.children))


def up(a: argparse.Namespace) -> int:
    run_dir = Path(a.dir).resolve()
    pid_file = run_dir / "cluster.pid"
    if pid_file.exists():
        old = int(pid_file.read_text().split()[0])
        if _alive_as(old, "cluster.py"):
            print(f"a cluster is already running (pid {old}); `make cluster-stop` first",
                  file=sys.stderr)
            return 1
    run_dir.mkdir(parents=True, exist_ok=True)
    _prepare_dir(run_dir)
    pid_file.write_text(f"{os.getpid()}\n")
    cluster = Cluster(a.replicas, a.port, a.first_port or a.port + 1, run_dir, a.address,
                      a.nginx == "on", a.python)

    def on_signal(signum, _frame):
        cluster.stopping = True
        raise KeyboardInterrupt

    # SIGINT explicitly too: a shell that starts make in the background ignores it otherwise.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    code = 1
    try:
        cluster.start()
        code = cluster.watch()
    except KeyboardInterrupt:
        code = 0
        _log("stopping")
    except RuntimeError as exc:
        _log(f"error: {exc}")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut cleanup
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cluster.close()
        pid_file.unlink(missing_ok=True)
        (run_dir / "children.pids").unlink(missing_ok=True)
    return code


def stop(a: argparse.Namespace) -> int:
    """SIGTERM the supervisor and wait; then SIGKILL any recorded child still alive."""
    run_dir = Path(a.dir).resolve()
    pid_file, pids_file = run_dir / "cluster.pid", run_dir / "children.pids"
    children = []
    if pids_file.exists():
        children = [(int(p), n) for p, n in (ln.split() for ln in pids_file.read_text().split("\n")
                                             if ln.strip())]
    sup = int(pid_file.read_text().split()[0]) if pid_file.exists() else None
    if sup is not None and _alive_as(sup, "cluster.py"):
        os.kill(sup, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S + 10
        while _alive_as(sup, "cluster.py") and time.monotonic() < deadline:
            time.sleep(0.2)
        print(f"cluster (pid {sup}) stopped" if not _alive_as(sup, "cluster.py")
              else f"cluster (pid {sup}) still running after SIGTERM", flush=True)
    elif sup is None and not children:
        print(f"no cluster running (no {pid_file})")
        return 0
    elif sup is not None:
        print(f"the cluster (pid {sup}) was not running; removing its pid files")
    for pid, name in children:
        marker = "nginx" if name == "nginx" else "streamlit"
        if _alive_as(pid, marker):
            os.kill(pid, signal.SIGKILL)
            print(f"{name} (pid {pid}) outlived the supervisor: killed")
    pid_file.unlink(missing_ok=True)
    pids_file.unlink(missing_ok=True)
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("action", nargs="?", default="up", choices=("up", "stop", "render"))
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--port", type=int, default=8500, help="nginx's port")
    p.add_argument("--first-port", type=int, default=0,
                   help="the first replica's port (default: --port + 1)")
    p.add_argument("--dir", default=str(DEFAULT_DIR), help="run folder: pids, logs, nginx files")
    p.add_argument("--address", default="127.0.0.1", help="the replicas' address")
    p.add_argument("--nginx", choices=("on", "off"), default="on")
    p.add_argument("--upstream-host", default="127.0.0.1", help="render: the replicas' host")
    p.add_argument("--python", default=sys.executable)
    a = p.parse_args(argv)
    if a.replicas < 1:
        p.error("--replicas must be at least 1")
    if a.action == "stop":
        return stop(a)
    if a.action == "render":
        ports = [(a.first_port or a.port + 1) + i for i in range(a.replicas)]
        sys.stdout.write(render(ports, str(a.port), a.upstream_host))
        return 0
    return up(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
