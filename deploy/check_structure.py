#!/usr/bin/env python3
"""What the schema validators cannot see: that deploy/ is wired consistently.

- Every peers file (compose/, the ConfigMap) uses only the keys peers.toml
  documents, lists exactly the *other* nodes by their stable names, and
  names its secret with secret_env (never a literal secret).
- The compose services mount their own peers file, pass --peers, carry the
  secret from deploy/.env, and publish only on loopback.
- The StatefulSet, headless Service, ConfigMap and Secret agree on names,
  ports, replica count and the secret key; probes ask /livez and /readyz; the pod runs
  as non-root with a read-only root filesystem and no capabilities.
- The Dockerfile builds with --locked, runs as a non-root user, exposes 7327
  and sets NO_COLOR; one image tag in the Dockerfile, compose, k8s and README.
- The systemd unit carries the hardening the deployment promises.

Run by deploy/validate.sh. Needs PyYAML and Python 3.11+ (tomllib).
"""

import re
import sys
import tomllib
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parent
PORT = 7327
SECRET_ENV = "ECP_MESH_SECRET"

# peers.toml keys as the issue and the federator define them.
TOP_KEYS = {"federation", "discovery", "peer"}
FEDERATION_KEYS = {"interval", "cron", "timeout", "reshare_external"}
DISCOVERY_KEYS = {"enabled", "trust"}
PEER_KEYS = {
    "url", "secret", "secret_env", "key_id", "key_secret", "key_secret_env", "legacy",
    "trust", "pull", "push", "interval", "cron", "instance",
}

problems: list[str] = []


def check(ok: bool, where: str, message: str) -> None:
    if not ok:
        problems.append(f"{where}: {message}")


def check_peers(where: str, text: str, expected_urls: set[str]) -> None:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        check(False, where, f"not TOML: {e}")
        return
    check(set(doc) <= TOP_KEYS, where, f"unknown top-level keys {sorted(set(doc) - TOP_KEYS)}")
    fed = doc.get("federation", {})
    check(set(fed) <= FEDERATION_KEYS, where, f"unknown [federation] keys {sorted(set(fed) - FEDERATION_KEYS)}")
    check(not ("interval" in fed and "cron" in fed), where, "[federation] sets both interval and cron")
    disc = doc.get("discovery", {})
    check(set(disc) <= DISCOVERY_KEYS, where, f"unknown [discovery] keys {sorted(set(disc) - DISCOVERY_KEYS)}")
    peers = doc.get("peer", [])
    for i, peer in enumerate(peers):
        at = f"{where} peer[{i}]"
        check(set(peer) <= PEER_KEYS, at, f"unknown keys {sorted(set(peer) - PEER_KEYS)}")
        check("secret" not in peer, at, "a literal secret; use secret_env")
        check("key_secret" not in peer, at, "a literal key secret; use key_secret_env")
        check(peer.get("secret_env") == SECRET_ENV, at, f'secret_env should be "{SECRET_ENV}"')
        trust = peer.get("trust", 0.9)
        check(isinstance(trust, (int, float)) and 0 <= trust <= 1, at, f"trust {trust!r} is not in 0..1")
        for flag in ("pull", "push"):
            check(isinstance(peer.get(flag, True), bool), at, f"{flag} is not a boolean")
    urls = [p.get("url") for p in peers]
    check(len(urls) == len(set(urls)), where, "a peer URL is listed twice")
    check(set(urls) == expected_urls, where, f"peers {sorted(urls)} should be {sorted(expected_urls)}")


def check_compose() -> None:
    where = "docker-compose.yml"
    doc = yaml.safe_load((DEPLOY / where).read_text())
    services = doc.get("services", {})
    names = sorted(services)
    check(len(names) == 3, where, f"expected a 3-node mesh, found services {names}")
    for name in names:
        svc = services[name]
        at = f"{where} services.{name}"
        command = svc.get("command", [])
        check("--peers" in command, at, "command does not pass --peers")
        peers_path = command[command.index("--peers") + 1] if "--peers" in command[:-1] else None
        mounts = [v for v in svc.get("volumes", []) if isinstance(v, str)]
        own = f"./compose/peers-{name}.toml"
        mount = next((m for m in mounts if m.startswith(own + ":")), None)
        check(mount is not None, at, f"does not mount {own}")
        if mount is not None:
            check(mount.split(":")[1] == peers_path, at, f"mounts {own} at {mount.split(':')[1]}, not {peers_path}")
            check(mount.endswith(":ro"), at, "the peers file should be mounted read-only")
        env = svc.get("environment", {})
        for var in ("ECP_SECRET", SECRET_ENV):
            value = str(env.get(var, ""))
            check(value.startswith("${" + SECRET_ENV), at, f"{var} should come from ${{{SECRET_ENV}}} (deploy/.env)")
        for port in svc.get("ports", []):
            check(str(port).startswith("127.0.0.1:"), at, f"port {port} is published beyond loopback")
            check(str(port).endswith(f":{PORT}"), at, f"port {port} does not map to {PORT}")
        check(svc.get("read_only") is True, at, "read_only root filesystem is off")
        check("ALL" in svc.get("cap_drop", []), at, "capabilities are not dropped")
        peers_file = DEPLOY / "compose" / f"peers-{name}.toml"
        check(peers_file.is_file(), at, f"{peers_file.name} is missing")
        if peers_file.is_file():
            others = {f"http://{o}:{PORT}" for o in names if o != name}
            check_peers(f"compose/{peers_file.name}", peers_file.read_text(), others)
    example = (DEPLOY / ".env.example").read_text()
    check(re.search(rf"^{SECRET_ENV}=replace-me", example, re.M) is not None, ".env.example",
          f"{SECRET_ENV} should be a placeholder")
    check(".env" in (DEPLOY / ".gitignore").read_text().split(), ".gitignore", "deploy/.env is not ignored")


def check_k8s() -> None:
    docs = {}
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        docs[doc["kind"]] = (f"k8s/{path.name}", doc)
    kust_name, kust = docs.pop("Kustomization")
    listed = {f"k8s/{r}" for r in kust.get("resources", [])}
    check(listed == {name for name, _ in docs.values()}, kust_name, f"resources {sorted(listed)} do not match the files")
    for kind in ("StatefulSet", "Service", "ConfigMap", "Secret"):
        check(kind in docs, "k8s/", f"no {kind}")
    if problems:
        return
    sts_file, sts = docs["StatefulSet"]
    svc_file, svc = docs["Service"]
    cm_file, cm = docs["ConfigMap"]
    sec_file, sec = docs["Secret"]
    spec = sts["spec"]
    name, service, replicas = sts["metadata"]["name"], spec["serviceName"], spec["replicas"]
    check(svc["metadata"]["name"] == service, sts_file, f"serviceName {service} is not the Service's name")
    check(svc["spec"].get("clusterIP") == "None", svc_file, "the Service is not headless (clusterIP: None)")
    selector = svc["spec"]["selector"]
    labels = spec["template"]["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in selector.items()), svc_file, "its selector does not match the pods")
    check(spec["selector"]["matchLabels"].items() <= labels.items(), sts_file, "matchLabels do not match the pods")
    check(bool(spec.get("volumeClaimTemplates")), sts_file, "no volumeClaimTemplates")
    pod = spec["template"]["spec"]
    check(pod["securityContext"].get("runAsNonRoot") is True, sts_file, "pod runAsNonRoot is not true")
    (container,) = pod["containers"]
    sc = container["securityContext"]
    check(sc.get("readOnlyRootFilesystem") is True, sts_file, "readOnlyRootFilesystem is not true")
    check(sc.get("allowPrivilegeEscalation") is False, sts_file, "allowPrivilegeEscalation is not false")
    check(sc.get("capabilities", {}).get("drop") == ["ALL"], sts_file, "capabilities do not drop ALL")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("http") == PORT, sts_file, f"container port http is not {PORT}")
    check(svc["spec"]["ports"][0]["port"] == PORT, svc_file, f"port is not {PORT}")
    # Alive decides restarts, ready decides traffic: a node whose store is
    # locked or whose skills folder is gone is left to recover, not killed.
    for probe, want in (("startupProbe", "/livez"), ("readinessProbe", "/readyz"), ("livenessProbe", "/livez")):
        path = container.get(probe, {}).get("httpGet", {}).get("path")
        check(path == want, sts_file, f"{probe} does not ask {want}")
    args = container["args"]
    check("--peers" in args, sts_file, "args do not pass --peers")
    peers_arg = args[args.index("--peers") + 1]
    env = {e["name"]: e for e in container["env"]}
    check("POD_NAME" in env and "$(POD_NAME)" in peers_arg, sts_file, "the peers file is not chosen by $(POD_NAME)")
    for var in ("ECP_SECRET", SECRET_ENV):
        ref = env.get(var, {}).get("valueFrom", {}).get("secretKeyRef", {})
        check(ref.get("name") == sec["metadata"]["name"] and ref.get("key") in sec.get("stringData", {}),
              sts_file, f"{var} does not come from the Secret")
    for value in sec.get("stringData", {}).values():
        check(value.startswith("REPLACE-ME"), sec_file, "the Secret holds something other than a placeholder")
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    peers_vol = next((n for n, v in volumes.items() if v.get("configMap", {}).get("name") == cm["metadata"]["name"]),
                     None)
    check(peers_vol is not None and peers_arg.startswith(mounts.get(peers_vol, "?") + "/"), sts_file,
          "the ConfigMap is not mounted where --peers points")
    check(all("subPath" not in m for m in container["volumeMounts"] if m["name"] == peers_vol), sts_file,
          "the ConfigMap is mounted with subPath: edits would never reach the pod")
    pods = [f"{name}-{i}" for i in range(replicas)]
    expected_keys = {peers_arg.rsplit("/", 1)[1].replace("$(POD_NAME)", p) for p in pods}
    check(set(cm["data"]) == expected_keys, cm_file, f"keys {sorted(cm['data'])} should be {sorted(expected_keys)}")
    for pod_name in pods:
        key = peers_arg.rsplit("/", 1)[1].replace("$(POD_NAME)", pod_name)
        if key in cm["data"]:
            others = {f"http://{p}.{service}:{PORT}" for p in pods if p != pod_name}
            check_peers(f"{cm_file} {key}", cm["data"][key], others)


def check_dockerfile() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    where = "Dockerfile"
    check("cargo build --release --locked -p ecp-node" in text, where, "no locked release build of ecp-node")
    check(len(re.findall(r"^FROM ", text, re.M)) >= 2, where, "not a multi-stage build")
    user = re.findall(r"^USER\s+(\S+)", text, re.M)
    check(bool(user) and not user[-1].startswith(("root", "0")), where, "the runtime does not run as a non-root user")
    check(re.search(rf"^EXPOSE {PORT}$", text, re.M) is not None, where, f"no EXPOSE {PORT}")
    check(f"ECP_LISTEN=0.0.0.0:{PORT}" in text, where, f"ECP_LISTEN is not 0.0.0.0:{PORT}")
    check(
        re.search(r'HEALTHCHECK .*\n\s*CMD \["ecp-node", "health"', text) is not None,
        where,
        "no HEALTHCHECK running `ecp-node health`",
    )
    check("VOLUME" in text, where, "no data volume")
    check(re.search(r"^\s*NO_COLOR=1", text, re.M) is not None, where, "NO_COLOR=1 is not set")


def check_image_tag() -> None:
    """One image tag everywhere the image is built or run."""
    tags = set(re.findall(r"-t (ecp-node\S*)", (DEPLOY / "Dockerfile").read_text()))
    tags |= set(re.findall(r"-t (ecp-node\S*?)`", (DEPLOY / "README.md").read_text()))
    tags |= set(re.findall(r"image: (ecp-node\S*)", (DEPLOY / "docker-compose.yml").read_text()))
    tags |= set(re.findall(r"image: (ecp-node\S*)", (DEPLOY / "k8s" / "statefulset.yaml").read_text()))
    check(len(tags) == 1, "image tags", f"one image tag expected, found {sorted(tags)}")


def check_unit() -> None:
    where = "ecp-node.service"
    settings = {}
    for line in (DEPLOY / where).read_text().splitlines():
        if "=" in line and not line.startswith(("#", ";")):
            key, value = line.split("=", 1)
            settings.setdefault(key.strip(), []).append(value.strip())
    want = {
        "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
        "CapabilityBoundingSet": "", "MemoryDenyWriteExecute": "yes", "StateDirectory": "ecp-node",
        "SystemCallFilter": "@system-service", "ExecReload": "/bin/kill -HUP $MAINPID",
    }
    for key, value in want.items():
        check(value in settings.get(key, []), where, f"{key}={value} is missing")
    check("DynamicUser" in settings or "User" in settings, where, "neither DynamicUser nor User")
    check(any(v.startswith("-/etc/") or v.startswith("/etc/") for v in settings.get("EnvironmentFile", [])), where,
          "no EnvironmentFile for the secret")
    check(bool(settings.get("RestrictAddressFamilies")), where, "no RestrictAddressFamilies")


def main() -> int:
    for step in (check_compose, check_k8s, check_dockerfile, check_image_tag, check_unit):
        try:
            step()
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            problems.append(f"{step.__name__}: unexpected structure ({type(e).__name__}: {e})")
    for problem in problems:
        print(f"deploy/{problem}")
    if problems:
        print(f"structure: {len(problems)} problem(s)")
        return 1
    print("structure: compose, k8s, Dockerfile and systemd unit are wired consistently")
    return 0


if __name__ == "__main__":
    sys.exit(main())
