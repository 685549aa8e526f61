#!/usr/bin/env bash
# Validates the deployment files offline: deploy/compose (docker compose config, Caddyfile),
# deploy/k8s (kustomize build | kubeconform -strict against Kubernetes' own OpenAPI schemas and the CRDs
# of KEDA, CloudNativePG and the Prometheus Operator), the alert rules (promtool check and test rules),
# deploy/temporal (helm template with the chart's copy | kubeconform) and deploy/grafana (JSON, metric
# names).
#
# Installs what it needs into ./bin at pinned versions, once (a stamp per version), using only the Go
# module proxy: the first run builds docker compose, Caddy, kustomize, kubeconform, helm and promtool
# (15-25 minutes on two cores); later runs take seconds. No Docker engine and no schema download from
# GitHub are needed: the schemas are generated from api/openapi-spec/swagger.json of the k8s.io/kubernetes
# module and from the CRD files inside the operators' own Go modules.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBECONFORM_VERSION=v0.7.0
KUSTOMIZE_VERSION=v5.8.1
COMPOSE_VERSION=v2.40.3
CADDY_VERSION=v2.10.2          # same as the caddy image in deploy/compose/compose.yaml
KUBERNETES_VERSION=v1.34.2     # the Kubernetes API the manifests are checked against
HELM_VERSION=v3.22.0
PROMTOOL_VERSION=v0.316.0      # github.com/prometheus/prometheus (promtool 3.x)
# The operators whose resources the manifests use; their CRDs come from these Go modules.
KEDA_VERSION=v2.21.0
CNPG_VERSION=v1.27.1
PROMETHEUS_OPERATOR_VERSION=v0.85.0

BIN=$PWD/bin
SCHEMAS=$BIN/k8s-schemas
CRD_SCHEMAS=$BIN/crd-schemas
mkdir -p "$BIN"
export GOWORK=off

stamp() { [ -e "$BIN/.$1-$2" ]; }
mark() { rm -f "$BIN/.$1-"*; touch "$BIN/.$1-$2"; }

# install NAME VERSION PACKAGE: go install PACKAGE@VERSION into ./bin once per version.
install() {
  if ! stamp "$1" "$2" || [ ! -x "$BIN/$1" ]; then
    echo "installing $1 $2 into ./bin (the first time takes minutes)"
    GOBIN=$BIN go install "$3@$2"
    mark "$1" "$2"
  fi
}

install kubeconform $KUBECONFORM_VERSION github.com/yannh/kubeconform/cmd/kubeconform
install kustomize $KUSTOMIZE_VERSION sigs.k8s.io/kustomize/kustomize/v5
install helm $HELM_VERSION helm.sh/helm/v3/cmd/helm
install promtool $PROMTOOL_VERSION github.com/prometheus/prometheus/cmd/promtool
install caddy $CADDY_VERSION github.com/caddyserver/caddy/v2/cmd/caddy

# docker compose's go.mod has exclude directives, so `go install pkg@version` refuses it: build it
# inside its own (downloaded, read-only) module instead. Used standalone as bin/docker-compose; it is
# the same program as the `docker compose` plugin.
if ! stamp docker-compose $COMPOSE_VERSION || [ ! -x "$BIN/docker-compose" ]; then
  echo "building docker compose $COMPOSE_VERSION into ./bin (a few minutes the first time)"
  dir=$(go mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  (cd "$dir" && go build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
    -o "$BIN/docker-compose" ./cmd)
  mark docker-compose $COMPOSE_VERSION
fi

# Kubernetes JSON schemas, standalone and strict (unknown fields are errors), one per kind, in the
# layout kubeconform's default registry uses.
if ! stamp k8s-schemas $KUBERNETES_VERSION || [ ! -d "$SCHEMAS" ]; then
  command -v python3 >/dev/null || {
    echo "lint-deploy: python3 is needed to generate the Kubernetes schemas (apt-get install python3)" >&2
    exit 1
  }
  echo "generating Kubernetes $KUBERNETES_VERSION JSON schemas into ./bin/k8s-schemas"
  dir=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$SCHEMAS"
  python3 scripts/k8s-schemas.py "$dir/api/openapi-spec/swagger.json" \
    "$SCHEMAS/$KUBERNETES_VERSION-standalone-strict"
  mark k8s-schemas $KUBERNETES_VERSION
fi

# The operators' CRDs as strict JSON schemas, <group>/<kind>_<version>.json.
CRDS_STAMP="$KEDA_VERSION-$CNPG_VERSION-$PROMETHEUS_OPERATOR_VERSION"
if ! stamp crd-schemas "$CRDS_STAMP" || [ ! -d "$CRD_SCHEMAS" ]; then
  python3 -c "import yaml" 2>/dev/null || {
    echo "lint-deploy: python3's yaml module is needed to read the CRDs (apt-get install python3-yaml)" >&2
    exit 1
  }
  echo "generating the JSON schemas of the KEDA, CloudNativePG and Prometheus Operator CRDs into ./bin/crd-schemas"
  moddir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }
  keda=$(moddir "github.com/kedacore/keda/v2@$KEDA_VERSION")/config/crd/bases
  cnpg=$(moddir "github.com/cloudnative-pg/cloudnative-pg@$CNPG_VERSION")/config/crd/bases
  promop=$(moddir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")/example/prometheus-operator-crd
  rm -rf "$CRD_SCHEMAS"
  python3 scripts/crd-schemas.py "$CRD_SCHEMAS" \
    "$keda/keda.sh_scaledobjects.yaml" "$keda/keda.sh_triggerauthentications.yaml" \
    "$cnpg/postgresql.cnpg.io_clusters.yaml" "$cnpg/postgresql.cnpg.io_poolers.yaml" \
    "$cnpg/postgresql.cnpg.io_scheduledbackups.yaml" "$cnpg/postgresql.cnpg.io_databases.yaml" \
    "$promop/monitoring.coreos.com_podmonitors.yaml" "$promop/monitoring.coreos.com_servicemonitors.yaml" \
    "$promop/monitoring.coreos.com_prometheusrules.yaml"
  mark crd-schemas "$CRDS_STAMP"
fi

echo "== compose: docker compose config (default, --profile demo, with .env.example)"
COMPOSE=deploy/compose/compose.yaml
"$BIN/docker-compose" -f $COMPOSE config -q
"$BIN/docker-compose" -f $COMPOSE --profile demo config -q
"$BIN/docker-compose" -f $COMPOSE --env-file deploy/compose/.env.example config -q
echo "ok"

echo "== compose: Caddyfile (caddy adapt, caddy fmt)"
"$BIN/caddy" adapt --config deploy/compose/caddy/Caddyfile --adapter caddyfile >/dev/null
"$BIN/caddy" fmt deploy/compose/caddy/Caddyfile | diff -u deploy/compose/caddy/Caddyfile - ||
  { echo "deploy/compose/caddy/Caddyfile is not formatted (bin/caddy fmt --overwrite)"; exit 1; }
echo "ok"

echo "== k8s: kustomize build deploy/k8s | kubeconform -strict (Kubernetes ${KUBERNETES_VERSION#v})"
KUBECONFORM=("$BIN/kubeconform" -strict -summary -output text
  -kubernetes-version "${KUBERNETES_VERSION#v}"
  -schema-location "$SCHEMAS/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json"
  -schema-location "$CRD_SCHEMAS/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json")
"$BIN/kustomize" build deploy/k8s | "${KUBECONFORM[@]}" -
"${KUBECONFORM[@]}" deploy/k8s/secrets.example.yaml

echo "== temporal: helm template deploy/temporal/chart/temporal -f deploy/temporal/values.yaml | kubeconform"
# The chart's ServiceMonitors and the CloudNativePG resources against their CRDs; the rest against Kubernetes'.
# The chart writes empty fields as null (annotations:, activeDeadlineSeconds:), which the API server reads
# as absent but a strict schema refuses: they are dropped first.
"$BIN/helm" template temporal deploy/temporal/chart/temporal -n temporal -f deploy/temporal/values.yaml |
  python3 -c '
import sys, yaml
def drop(v):
    if isinstance(v, dict):
        return {k: drop(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [drop(x) for x in v]
    return v
yaml.safe_dump_all([drop(d) for d in yaml.safe_load_all(sys.stdin) if d], sys.stdout)' |
  "${KUBECONFORM[@]}" -
"${KUBECONFORM[@]}" deploy/temporal/postgres.yaml

echo "== alerts: promtool check rules, promtool test rules (deploy/k8s/tests/alerts.promtool.yaml)"
rules=$(mktemp -d)
trap 'rm -rf "$rules"' EXIT
python3 - deploy/k8s/monitoring.yaml "$rules/postbox-alerts.yaml" <<'PY'
import sys, yaml
rule = [d for d in yaml.safe_load_all(open(sys.argv[1], encoding="utf-8")) if d and d["kind"] == "PrometheusRule"]
assert len(rule) == 1, "one PrometheusRule expected in monitoring.yaml"
yaml.safe_dump(rule[0]["spec"], open(sys.argv[2], "w", encoding="utf-8"), sort_keys=False)
PY
cp deploy/k8s/tests/alerts.promtool.yaml "$rules/"
"$BIN/promtool" check rules "$rules/postbox-alerts.yaml"
# Every alert has a test case.
missing=$(comm -23 <(grep -o 'alert: [A-Za-z]*' deploy/k8s/monitoring.yaml | sort -u) \
  <(grep -o 'alertname: [A-Za-z]*' deploy/k8s/tests/alerts.promtool.yaml | sed 's/alertname/alert/' | sort -u))
[ -z "$missing" ] || { echo "alerts without a promtool test case: $missing"; exit 1; }
"$BIN/promtool" test rules "$rules/alerts.promtool.yaml"

echo "== grafana: deploy/grafana/postbox.json (JSON, metric names)"
python3 - deploy/grafana/postbox.json <<'PY'
import json, re, sys
known = {
    "postbox_http_requests_total", "postbox_http_request_duration_seconds_bucket",
    "postbox_formtask_transitions_total", "postbox_formtask_resyncs_total", "postbox_validation_failures_total",
    "postbox_pdf_render_seconds_bucket", "postbox_db_pool_acquired_conns",
    "postbox_db_pool_idle_conns", "postbox_db_pool_max_conns",
    "postbox_db_pool_acquire_wait_seconds_total",
    "postbox_webhook_deliveries_total", "postbox_webhook_dead_letters_total", "postbox_webhook_lag_seconds",
    "postbox_webhook_delivery_lag_seconds_bucket",
}
dash = json.load(open(sys.argv[1], encoding="utf-8"))
used, bad = set(), []
for p in dash["panels"]:
    for t in p.get("targets", []):
        for m in re.findall(r"\b(?:postbox|temporal)_[a-z0-9_]+", t["expr"]):
            used.add(m)
            if m.startswith("postbox_") and m not in known:
                bad.append(f'panel "{p["title"]}": unknown metric {m}')
if "datasource" not in [v["name"] for v in dash["templating"]["list"]]:
    bad.append("no datasource variable")
if bad:
    sys.exit("\n".join(bad))
missing = known - used
if missing:
    sys.exit("metrics without a panel: " + ", ".join(sorted(missing)))
print(f"ok: {len(dash['panels'])} panels, {len(used)} metrics")
PY
