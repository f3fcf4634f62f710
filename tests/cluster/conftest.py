"""Cluster harness: deploy/cluster.py (replicas + nginx) as a subprocess, its access log, and
sticky keys chosen per replica.

Fixtures
    cluster_checkpoints   -> folder with one tiny random model (cheap to run on 3 replicas)
    expected_pieces(s)    -> the source pieces the attention view must label its axis with
Helpers
    Cluster.start(...)    -> a running cluster; .stop() ends it and checks nothing outlived it
    access_log(path)      -> parsed nginx access-log lines (format `lab` of deploy/nginx.conf.in)
"""

from __future__ import annotations

import http.cookies
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from tests.conftest import ROOT, skip_or_fail

CLUSTER = ROOT / "deploy" / "cluster.py"
START_TIMEOUT_S = 240  # 3 replicas importing torch at once on a loaded 2-core machine
WORDS = ["The cat", "The big dog", "My friend", "A child", "Winter", "The teacher"]
VERBS = ["eats the fish", "reads a book in the park", "is cold", "drinks water"]
KOREAN = ["고양이는 생선을 먹어요.", "큰 개가 생선을 먹어요.", "겨울은 추워요.", "감기 조심하세요."]
SENTENCES = [f"{w} {v}." for w in WORDS for v in VERBS]  # 24 different sentences
LOG_LINE = re.compile(
    r'\[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) \d+ '
    r"upstream=(?P<upstream>.*?) upstream_status=(?P<upstream_status>.*?) key=(?P<key>\S+) ")


@dataclass
class LogLine:
    request: str
    status: int
    upstreams: list[str]  # every replica nginx tried, in order; the last one answered
    key: str


def access_log(path: Path) -> list[LogLine]:
    """nginx's access log, parsed; a line that does not parse is an error (format drift)."""
    out = []
    for line in path.read_text().splitlines():
        m = LOG_LINE.search(line)
        assert m, f"unparsed access-log line: {line}"
        ups = [u.strip() for u in m["upstream"].replace(" : ", ", ").split(",") if u.strip()]
        out.append(LogLine(m["request"], int(m["status"]), ups, m["key"]))
    return out


def _free_ports(n: int) -> list[int]:
    """n consecutive free loopback ports (cluster.py puts replicas on port+1 .. port+n-1)."""
    for base in range(20000 + os.getpid() % 20000, 60000, 97):
        try:
            socks = []
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return list(range(base, base + n))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Cluster:
    proc: subprocess.Popen
    run_dir: Path
    port: int
    replica_ports: list[int]
    pids: dict[str, int] = field(default_factory=dict)  # replica-0.., nginx -> pid
    killed: list[str] = field(default_factory=list)  # replicas a test killed

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.run_dir / "nginx-access.log"

    @classmethod
    def start(cls, run_dir: Path, replicas: int, env: dict[str, str]) -> Cluster:
        ports = _free_ports(replicas + 1)
        run_dir.mkdir(parents=True, exist_ok=True)
        out = open(run_dir / "supervisor.out", "wb")
        proc = subprocess.Popen(
            [sys.executable, str(CLUSTER), "--replicas", str(replicas), "--port", str(ports[0]),
             "--dir", str(run_dir)], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, **env})
        out.close()
        c = cls(proc, run_dir, ports[0], ports[1:])
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if "up; Ctrl-C" in c.output():
                pids = (run_dir / "children.pids").read_text().split("\n")
                c.pids = {name: int(pid) for pid, name in (ln.split() for ln in pids if ln)}
                return c
            time.sleep(0.5)
        c.stop(check=False)
        pytest.fail(f"the cluster did not come up:\n{c.output()[-3000:]}", pytrace=False)

    def output(self) -> str:
        return (self.run_dir / "supervisor.out").read_text(errors="replace")

    def replica_of(self, upstream: str) -> str:
        return f"replica-{self.replica_ports.index(int(upstream.rsplit(':', 1)[1]))}"

    def stop(self, check: bool = True) -> None:
        """SIGTERM the supervisor (what Ctrl-C and `make cluster-stop` do); with `check`, every
        process it started must be gone once it has exited."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if check:
                    pytest.fail("the supervisor did not stop within 40 s of SIGTERM")
        left = {name: pid for name, pid in self.pids.items() if alive(pid)}
        for pid in left.values():
            os.kill(pid, signal.SIGKILL)
        if check:
            assert not left, f"processes outlived the cluster: {left}"
            assert self.proc.returncode == 0, self.output()[-2000:]


def lines_of(cluster: Cluster, key: str, at_least: int = 1, wait_s: float = 5.0
             ) -> list[LogLine]:
    """The access-log lines of `key`, waiting until there are `at_least` of them: nginx writes a
    line just after the response, so a fast client can read the log before it is there."""
    deadline = time.monotonic() + wait_s
    while True:
        found = [ln for ln in access_log(cluster.log) if ln.key == key]
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def sticky_keys(cluster: Cluster, per_replica: int) -> dict[str, list[str]]:
    """Cookie values that nginx's consistent hash sends to each replica, `per_replica` each.

    Found the way nginx routes them: one /_stcore/health request per candidate key with the
    lab_replica cookie set, then the access log says which replica answered it."""
    # A first visit without the cookie gets one from nginx, and keeps its replica with it.
    with urllib.request.urlopen(f"{cluster.base}/", timeout=10) as resp:
        jar = http.cookies.SimpleCookie()
        for header in resp.headers.get_all("Set-Cookie") or []:
            jar.load(header)
    assert "lab_replica" in jar, "nginx set no sticky cookie on a first visit"
    first = jar["lab_replica"].value
    for _ in range(3):
        req = urllib.request.Request(f"{cluster.base}/_stcore/health",
                                     headers={"Cookie": f"lab_replica={first}"})
        urllib.request.urlopen(req, timeout=10).read()
    served = {ln.upstreams[-1] for ln in lines_of(cluster, first, at_least=4)}
    assert len(served) == 1, f"a first visit's requests went to several replicas: {served}"

    found: dict[str, list[str]] = {f"replica-{i}": [] for i in range(len(cluster.replica_ports))}
    for i in range(500):
        key = f"fault-{i}"
        req = urllib.request.Request(f"{cluster.base}/_stcore/health",
                                     headers={"Cookie": f"lab_replica={key}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.read() == b"ok"
            assert "lab_replica" not in (resp.headers.get("Set-Cookie") or ""), \
                "nginx must not replace a browser's sticky cookie"
        line = lines_of(cluster, key)[-1]
        name = cluster.replica_of(line.upstreams[-1])
        if len(found[name]) < per_replica:
            found[name].append(key)
        if all(len(v) == per_replica for v in found.values()):
            return found
    raise AssertionError(f"500 keys did not fill every replica: {found}")


@pytest.fixture(scope="session")
def nginx_present() -> None:
    sys.path.insert(0, str(ROOT / "deploy"))
    from cluster import find_nginx

    if find_nginx() is None:
        skip_or_fail("nginx not installed: `make cluster` or apt-get install nginx")


@pytest.fixture(scope="session")
def cluster_checkpoints(tmp_path_factory) -> Path:
    """A tiny random model whose pieces differ from sentence to sentence."""
    from model import ModelConfig, Tokenizer, Transformer, save_checkpoint

    root = tmp_path_factory.mktemp("cluster_checkpoints")
    tok = Tokenizer.train((SENTENCES + KOREAN) * 30, vocab_size=420)
    cfg = ModelConfig(vocab_size=tok.vocab_size, d_model=32, n_heads=4, d_ff=64, n_enc_layers=2,
                      n_dec_layers=2, max_len=24)
    torch.manual_seed(0)
    save_checkpoint(Transformer(cfg).eval(), tok, root / "paper", card={"variant": "paper"})
    return root


@pytest.fixture(scope="session")
def expected_pieces(cluster_checkpoints):
    """sentence -> the x labels of the attention view's first chart (pieces, repeats numbered
    " (2)", " (3)"... as the view does)."""
    from model import capture, load_checkpoint

    bundle = load_checkpoint(cluster_checkpoints / "paper")
    cache: dict[str, list[str]] = {}

    def pieces(sentence: str) -> list[str]:
        if sentence not in cache:
            src = capture(bundle, [sentence], target_lang="auto").src_tokens[0]
            seen: dict[str, int] = {}
            out = []
            for p in src:
                seen[p] = seen.get(p, 0) + 1
                out.append(p if seen[p] == 1 else f"{p} ({seen[p]})")
            cache[sentence] = out
        return cache[sentence]

    return pieces
