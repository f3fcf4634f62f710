"""deploy/: the nginx config nginx accepts, the compose rendering committed as rendered, and the
cluster's three ways to end (Ctrl-C, `make cluster-stop`, the supervisor killed) leaving no
replica or nginx behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.cluster.conftest import CLUSTER, Cluster, alive
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "deploy"))
import cluster as deploy_cluster  # noqa: E402  (deploy/ is not a package)


def test_compose_config_is_the_template_rendered():
    """deploy/nginx.compose.conf is what compose.yaml says renders it; no drift by hand."""
    want = deploy_cluster.render([8501, 8502, 8503], "80", "app")
    assert (ROOT / "deploy" / "nginx.compose.conf").read_text() == want
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    assert "render --replicas 3 --port 80 --first-port 8501 --upstream-host app" in compose


def test_rendered_config_passes_nginx_t(nginx_present, tmp_path):
    conf = tmp_path / "nginx.conf"
    deploy_cluster._prepare_dir(tmp_path)
    conf.write_text(deploy_cluster.render([18501, 18502], "18500", run_dir=tmp_path))
    text = conf.read_text()
    for needed in ("hash $lab_replica consistent", "proxy_set_header Upgrade $http_upgrade",
                   "max_fails=1", "proxy_next_upstream error timeout", "location = /healthz",
                   "$upstream_addr"):
        assert needed in text, needed
    # no keepalive pool: a reset pooled connection would mark a live replica failed
    assert "keepalive " not in text.split("upstream lab_replicas")[1].split("}")[0]
    nginx = deploy_cluster.find_nginx()
    res = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", "stderr"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_replica_command_is_make_runs():
    """The replicas run `make run`'s command line (port and address aside)."""
    make_run = (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    cmd = deploy_cluster.replica_command("PY", 1234, "127.0.0.1")
    flat = " ".join(make_run.replace("\\\n", " ").split())
    for i in range(1, len(cmd)):
        arg = cmd[i]
        if cmd[i - 1] in ("--server.port", "--server.address"):
            continue
        assert arg in flat, (arg, flat)


@pytest.mark.parametrize("how", ["SIGINT", "cluster-stop", "supervisor SIGKILLed"])
def test_cluster_ends_with_nothing_left(how, nginx_present, cluster_checkpoints, tmp_path):
    c = Cluster.start(tmp_path / "run", 1, {"ATTN_CHECKPOINTS_DIR": str(cluster_checkpoints)})
    try:
        assert set(c.pids) == {"replica-0", "nginx"}
        assert all(alive(p) for p in c.pids.values())
        if how == "SIGINT":  # Ctrl-C in the terminal
            c.proc.send_signal(signal.SIGINT)
            assert c.proc.wait(timeout=40) == 0
        elif how == "cluster-stop":
            res = subprocess.run([sys.executable, str(CLUSTER), "stop", "--dir", str(c.run_dir)],
                                 capture_output=True, text=True, timeout=60)
            assert res.returncode == 0 and "stopped" in res.stdout, res.stdout + res.stderr
            assert c.proc.wait(timeout=10) == 0
        else:  # no cleanup code runs: the kernel's parent-death signal must end the children
            os.kill(c.proc.pid, signal.SIGKILL)
            c.proc.wait(timeout=10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(alive(p) for p in c.pids.values()):
            time.sleep(0.2)
        left = {n: p for n, p in c.pids.items() if alive(p)}
        assert not left, f"{how}: outlived the cluster: {left}"
        if how != "supervisor SIGKILLed":
            assert not (c.run_dir / "cluster.pid").exists()
    finally:
        c.stop(check=False)
