#!/bin/sh
# The Secrets the chart's services read (<release>-<service>), on stdout as manifests for `kubectl apply -f -`:
# each service's secrets derived from the root (deploy/make-env.sh), the keys made once (deploy/make-compose-env.sh:
# kept in OUT_DIR, back that folder up), and DATABASE_URL (your PostgreSQL; one database, a schema per service).
# Also, when set in the environment: GATEWAY_UPSTREAM_API_KEY (the gateway's), CONNECTOR_GOOGLE_CLIENT_ID and
# CONNECTOR_GOOGLE_CLIENT_SECRET (the connector's), SETTLEMENT_EVM_KEY (settlement's anchoring key),
# OTEL_EXPORTER_OTLP_HEADERS (every service's: the trace collector's credentials). It also makes <release>-metrics,
# the metrics bearer (key `token`) for Prometheus' ServiceMonitors or a credentials file.
# The root secret stays on the operator's machine: the cluster holds only what each service needs.
#   PLATFORM_SECRET=$(cat root.secret) DATABASE_URL=postgres://... RELEASE=platform sh deploy/helm/make-secrets.sh \
#     | kubectl apply -n platform -f -
set -eu
: "${DATABASE_URL:?set DATABASE_URL (the PostgreSQL every service uses)}"
here=$(cd "$(dirname "$0")" && pwd)
release=${RELEASE:-platform}
out=${OUT_DIR:-$here/../env}
OUT_DIR="$out" sh "$here/../make-compose-env.sh" >&2
# The operator's own secrets of a service, from the environment, when set.
extra() {
  case $1 in
    gateway) names=GATEWAY_UPSTREAM_API_KEY ;;
    connector) names='CONNECTOR_GOOGLE_CLIENT_ID CONNECTOR_GOOGLE_CLIENT_SECRET' ;;
    settlement) names=SETTLEMENT_EVM_KEY ;;
    *) names='' ;;
  esac
  names="$names OTEL_EXPORTER_OTLP_HEADERS"
  for name in $names; do
    eval "value=\${$name:-}"
    [ -z "$value" ] || echo "$name=$value"
  done
}
for service in scheduler settlement marketplace gateway memory contracts connector router; do
  printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-%s\n  labels:\n    app.kubernetes.io/name: platform\n    app.kubernetes.io/instance: %s\ntype: Opaque\nstringData:\n' "$release" "$service" "$release"
  # JSON strings are YAML's double-quoted scalars: every value goes through as it is.
  { cat "$out/$service.env"; [ -f "$out/$service-keys.env" ] && cat "$out/$service-keys.env"; echo "DATABASE_URL=$DATABASE_URL"; extra "$service"; } |
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      name=${line%%=*}
      value=$(printf '%s' "${line#*=}" | sed 's/\\/\\\\/g; s/"/\\"/g')
      printf '  %s: "%s"\n' "$name" "$value"
    done
done
# Prometheus' copy of the metrics bearer (make-compose-env.sh wrote it to metrics-token), in no service's Secret.
printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s-metrics\n  labels:\n    app.kubernetes.io/name: platform\n    app.kubernetes.io/instance: %s\ntype: Opaque\nstringData:\n  token: "%s"\n' "$release" "$release" "$(cat "$out/metrics-token")"
