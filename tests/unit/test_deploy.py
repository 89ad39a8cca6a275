"""deploy/, scripts/classroom.sh and scripts/serve.sh: the files parse and hold what hosting a class needs.

No container engine or cluster runs here, so this is a schema-level check (PyYAML); where
``haproxy`` is installed its own config checker validates the HAProxy files too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def _all_manifests() -> list[dict]:
    return [doc for path in sorted((DEPLOY / "k8s").glob("*.yaml")) for doc in _docs(path)]


def _manifests() -> dict[str, dict]:
    """The app's manifests by kind (the class store's Redis has its own: ``_redis``)."""
    return {doc["kind"]: doc for doc in _all_manifests()
            if doc["kind"] == "Kustomization" or doc["metadata"]["name"] == "token-journey"}


def _redis() -> dict[str, dict]:
    return {doc["kind"]: doc for doc in _all_manifests()
            if doc["kind"] != "Kustomization" and doc["metadata"]["name"] == "token-journey-redis"}


def test_every_manifest_has_api_version_kind_and_name() -> None:
    manifests = _manifests()
    assert {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler", "Kustomization"} <= set(manifests)
    for doc in _all_manifests():
        assert doc.get("apiVersion"), doc["kind"]
        if doc["kind"] != "Kustomization":
            assert doc["metadata"]["name"] in ("token-journey", "token-journey-redis"), doc["kind"]
    listed = set(manifests["Kustomization"]["resources"])
    assert listed == {p.name for p in (DEPLOY / "k8s").glob("*.yaml")} - {"kustomization.yaml"}


def test_deployment_requests_resources_and_probes_health() -> None:
    m = _manifests()
    dep = m["Deployment"]
    assert dep["apiVersion"] == "apps/v1"
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
    [container] = dep["spec"]["template"]["spec"]["containers"]
    requests = container["resources"]["requests"]
    assert requests["cpu"] and requests["memory"]
    assert container["resources"]["limits"]["memory"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == HEALTH
    port = container["ports"][0]
    assert port["containerPort"] == 8501
    svc = m["Service"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert svc["spec"]["ports"][0]["targetPort"] in (port["name"], port["containerPort"])


def test_ingress_uses_cookie_affinity_and_long_websocket_timeouts() -> None:
    m = _manifests()
    ing = m["Ingress"]
    notes = ing["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"]
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 600
    backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == m["Service"]["metadata"]["name"]
    hpa = m["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "token-journey"}
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_every_pod_and_container_shares_one_redis_class_store_and_one_teacher_key() -> None:
    redis = _redis()
    assert {"Deployment", "Service"} <= set(redis)
    [container] = redis["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("redis:") and container["readinessProbe"]
    assert redis["Service"]["spec"]["selector"].items() <= redis["Deployment"]["spec"]["template"]["metadata"]["labels"].items()
    [app] = _manifests()["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in app["env"]}
    host = redis["Service"]["metadata"]["name"]
    assert env["TOKEN_JOURNEY_REDIS_URL"]["value"] == f"redis://{host}:{redis['Service']['spec']['ports'][0]['port']}/0"
    assert env["TOKEN_JOURNEY_TEACHER_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "token-journey"
    [compose] = _docs(DEPLOY / "compose.yaml")
    app_service = compose["services"]["app"]
    assert app_service["environment"]["TOKEN_JOURNEY_REDIS_URL"] == "redis://redis:6379/0"
    assert "TOKEN_JOURNEY_TEACHER_KEY" in app_service["environment"]
    assert app_service["depends_on"]["redis"]["condition"] == "service_healthy"
    assert compose["services"]["redis"]["image"].startswith("redis:")
    assert compose["services"]["redis"]["restart"] == "unless-stopped"


def test_compose_runs_replicas_behind_haproxy_with_health_checks() -> None:
    [compose] = _docs(DEPLOY / "compose.yaml")
    app, lb = compose["services"]["app"], compose["services"]["haproxy"]
    assert app["build"]["dockerfile"] == "deploy/Dockerfile"
    assert app["deploy"]["replicas"] >= 2
    assert any(HEALTH in part for part in app["healthcheck"]["test"])
    assert lb["depends_on"]["app"]["condition"] == "service_healthy"
    assert any(v.startswith("./haproxy.cfg:") for v in lb["volumes"])
    assert (DEPLOY / "haproxy.cfg").is_file()


def test_dockerfile_builds_offline_and_checks_health() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"pip install .*--no-index .*-r requirements.txt", text)
    assert "HEALTHCHECK" in text and HEALTH in text
    assert '"streamlit", "run", "app.py"' in text  # the README's run command: app.py's st.App preloads
    # every package the app imports (each top-level folder with an __init__.py but the tests and
    # benches), its pages and assets: a new package left out would fail only inside the container
    packages = sorted(p.parent.name + "/" for p in ROOT.glob("*/__init__.py") if p.parent.name not in ("tests", "bench"))
    assert {"core/", "serving/", "ui/"} <= set(packages), packages
    for folder in (*packages, "pages/", "assets/"):
        assert f"COPY {folder}" in text, folder


@pytest.mark.parametrize("name", ["deploy/haproxy.cfg"])
def test_haproxy_files_share_affinity_and_health_settings(name: str) -> None:
    for text in ((ROOT / name).read_text(encoding="utf-8"), (ROOT / "scripts/serve.sh").read_text(encoding="utf-8")):
        assert "cookie TJ_REPLICA insert" in text
        assert f"option httpchk GET {HEALTH}" in text
        assert "timeout tunnel" in text


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_haproxy_accepts_the_compose_config() -> None:
    result = subprocess.run(["haproxy", "-c", "-f", str(DEPLOY / "haproxy.cfg")], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr


def _classroom(tmp_path: Path, haproxy: bool, *args: str) -> subprocess.CompletedProcess[str]:
    """``scripts/classroom.sh`` with ``PYTHON=echo`` (a server's command line is printed, not run)
    and, with ``haproxy``, a stand-in HAProxy that copies the configuration it is given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("bash", "nproc", "hostname", "sed", "mktemp", "seq", "cat", "cp", "rm", "dirname"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    if haproxy:
        fake = bin_dir / "haproxy"
        fake.write_text(f'#!/bin/sh\nfor a in "$@"; do case "$a" in *.cfg) cp "$a" "{tmp_path}/haproxy.cfg" ;; esac; done\n')
        fake.chmod(0o755)
    env = {"PATH": str(bin_dir), "PYTHON": shutil.which("echo") or "/bin/echo", "TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1",
           "TMPDIR": str(tmp_path)}
    return subprocess.run(["bash", str(ROOT / "scripts" / "classroom.sh"), "--address", "127.0.0.1", "--port", "8512", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_classroom_command_without_haproxy_says_how_to_install_it_and_serves_with_one_process(
        tmp_path: Path) -> None:
    out = _classroom(tmp_path, False, "--replicas", "2")
    assert out.returncode == 0, out.stderr
    assert "HAProxy is not installed: serving with one process, on 1 of 2 cores. To use every core: " \
           "sudo apt-get install haproxy" in out.stderr.splitlines()
    links, server = out.stdout.splitlines()[-2:]  # PYTHON=echo: each command is printed, not run
    assert links.split()[:4] == ["-m", "serving.classroom.links", "--url", "http://127.0.0.1:8512"]
    command = server.split()
    assert command[:4] == ["-m", "streamlit", "run", "app.py"]  # the README's run command, with the profile
    assert command[command.index("--server.port") + 1] == "8512" and "--client.showErrorDetails" in command


def test_the_classroom_command_uses_every_core_behind_haproxy(tmp_path: Path) -> None:
    out = _classroom(tmp_path, True, "--replicas", "3")
    assert out.returncode == 0, out.stderr
    assert "HAProxy is not installed" not in out.stderr
    assert "3 replica(s) behind HAProxy on http://127.0.0.1:8512" in out.stdout
    config = (tmp_path / "haproxy.cfg").read_text(encoding="utf-8")
    assert "bind 127.0.0.1:8512" in config and len(re.findall(r"^\s+server r\d ", config, re.MULTILINE)) == 3


def test_the_classroom_command_defaults_to_one_process_per_core(tmp_path: Path) -> None:
    out = _classroom(tmp_path, True)
    cores = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout)
    assert f"{cores} replica(s) behind HAProxy" in out.stdout  # one core too: compressed and supervised


def test_one_replica_still_goes_through_haproxy(tmp_path: Path) -> None:
    out = _classroom(tmp_path, True, "--replicas", "1")
    assert out.returncode == 0, out.stderr
    assert "1 replica(s) behind HAProxy on http://127.0.0.1:8512" in out.stdout
