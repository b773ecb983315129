#!/bin/sh
# Writes one env file per service (deploy/env/<service>.env, mode 0600) holding exactly the secrets that service
# uses, derived from the one root secret (PLATFORM_SECRET) the way `platform up` derives them
# (cli/src/platform-secrets.ts). Run it on an operator machine, then copy each file to its machine only.
#   PLATFORM_SECRET=$(cat root.secret) sh deploy/make-env.sh
set -eu
: "${PLATFORM_SECRET:?set PLATFORM_SECRET (at least 32 characters), the platform's root secret}"
out=${OUT_DIR:-deploy/env}
mkdir -p "$out"
umask 077
# service: the derived settings it receives (the table in cli/src/platform-secrets.ts; keep them in step).
while read -r service settings; do
  file="$out/$service.env"
  : > "$file"
  for setting in $settings; do
    printf '%s=%s\n' "$setting" "$(npx --no-install platform secret "$setting")" >> "$file"
  done
  echo "wrote $file"
done <<'TABLE'
scheduler SCHEDULER_TOKEN SCHEDULER_AGENT_AUTH_SECRET SCHEDULER_WAKE_TOKEN
settlement LEDGER_TOKEN SETTLEMENT_AGENT_AUTH_SECRET
marketplace MARKETPLACE_LEDGER_TOKEN MARKETPLACE_AGENT_AUTH_SECRET
gateway PLATFORM_GATEWAY_TOKEN
memory MEMORY_MCP_TOKEN
contracts PLATFORM_CONTRACT_TOKEN
connector PLATFORM_CONNECTOR_TOKEN CONNECTOR_AGENT_AUTH_SECRET
router ROUTER_WAKE_TOKEN ROUTER_ADMIN_TOKEN PLATFORM_DAEMON_TOKEN SCHEDULER_TOKEN LEDGER_TOKEN PLATFORM_GATEWAY_TOKEN MEMORY_MCP_TOKEN PLATFORM_CONTRACT_TOKEN PLATFORM_CONNECTOR_TOKEN
TABLE
