#!/bin/sh
# Everything deploy/compose.yaml reads from env/ (mode 0600):
#   <service>.env           the secrets derived from the root (make-env.sh: `platform secret --for <service>`)
#   <service>-keys.env      keys made once at random and never derived or rewritten (settlement's sequencer key, the
#                           contract engine's wallet key, the marketplace's two keys, the connector's vault key):
#                           back them up; losing CONTRACTS_WALLET_KEY or CONNECTOR_VAULT_KEYS loses what they sealed
#   database.env            PostgreSQL's user and password (made once) and every service's DATABASE_URL
#   metrics-token           PLATFORM_METRICS_TOKEN alone, Prometheus' credentials file (observability/prometheus.yml);
#                           mode 0644 so the Prometheus container's user can read it: the folder itself is 0700
#   grafana.env             Grafana's admin password (made once), for the `observability` profile
#   PLATFORM_SECRET=$(cat root.secret) sh deploy/make-compose-env.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT_DIR:-$here/env}
OUT_DIR="$out" sh "$here/make-env.sh"
umask 077
chmod 700 "$out"
hex32() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
# Writes the file only when it is absent: keys made once stay the same on every later run.
once() {
  file="$out/$1"
  shift
  if [ -e "$file" ]; then echo "kept $file"; return; fi
  printf '%s\n' "$@" > "$file"
  echo "wrote $file"
}
once settlement-keys.env "SETTLEMENT_SEQUENCER_KEY=$(hex32)"
once contracts-keys.env "CONTRACTS_WALLET_KEY=$(hex32)"
once marketplace-keys.env "MARKETPLACE_SIGNING_KEY=$(hex32)" "MARKETPLACE_AGENT_KEY=$(hex32)"
once connector-keys.env "CONNECTOR_VAULT_KEYS=*k1:$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
password=$(hex32)
once database.env POSTGRES_USER=platform "POSTGRES_PASSWORD=$password" POSTGRES_DB=platform \
  "DATABASE_URL=postgres://platform:$password@postgres:5432/platform"
once grafana.env GF_SECURITY_ADMIN_USER=admin "GF_SECURITY_ADMIN_PASSWORD=$(hex32)"
# Derived, so written on every run (a new root rotates it with the services' copies).
sed -n 's/^PLATFORM_METRICS_TOKEN=//p' "$out/scheduler.env" > "$out/metrics-token"
chmod 644 "$out/metrics-token"
echo "wrote $out/metrics-token"
