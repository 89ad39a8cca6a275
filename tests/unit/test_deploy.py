"""deploy/ and scripts/serve.sh: the files parse and hold what hosting a class needs.

No container engine or cluster runs here, so this is a schema-level check (PyYAML); where
``haproxy`` is installed its own config checker validates the HAProxy files too.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def _manifests() -> dict[str, dict]:
    out = {}
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in _docs(path):
            out[doc["kind"]] = doc
    return out


def test_every_manifest_has_api_version_kind_and_name() -> None:
    manifests = _manifests()
    assert {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler", "Kustomization"} <= set(manifests)
    for kind, doc in manifests.items():
        assert doc.get("apiVersion"), kind
        if kind != "Kustomization":
            assert doc["metadata"]["name"] == "token-journey", kind
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
    assert "scripts/run_app.py" in text
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


def test_run_app_hands_over_to_streamlit_while_our_code_imports_on_a_thread() -> None:
    """``scripts/run_app.py`` must not make the server wait for torch and both models: Streamlit's
    command line is called with our imports still on their own thread, which then loads them."""
    code = """
import json, runpy, sys, threading
import streamlit.web.cli as cli
def fake_main(args, prog_name):
    importer = [t for t in threading.enumerate() if t.name == "token-journey-import"]
    result = {"args": args[2:], "prog": prog_name, "importer": len(importer)}
    importer[0].join(120)
    result["loaded"] = "ui.resources" in sys.modules
    from streamlit import string_util
    from ui.i18n import load_strings
    # The first Overview's own work done ahead: its modules, both languages, the emoji pattern.
    result["warm"] = ("ui.page" in sys.modules and "core.lessons.journey" in sys.modules
                      and load_strings.cache_info().currsize == 2 and "streamlit.emojis" in sys.modules
                      and "ui.components.journey" not in sys.modules)  # that one registers a component
    print(json.dumps(result))
    return 0
cli.main = fake_main
sys.argv = ["run_app.py", "--server.port", "8599"]
runpy.run_path("scripts/run_app.py", run_name="__main__")
"""
    env = {**os.environ, "TOKEN_JOURNEY_DEVICE": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"args": ["--server.port", "8599"], "prog": "streamlit", "importer": 1, "loaded": True,
                      "warm": True}
