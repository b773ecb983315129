#!/bin/sh
# Writes one env file per service (deploy/env/<service>.env, mode 0600) holding exactly the secrets that service
# receives under `platform up`, derived from the one root secret (PLATFORM_SECRET) by `platform secret --for
# <service>` (the table in cli/src/platform-secrets.ts, so nothing here can fall out of step with it). Run it on an
# operator machine, then copy each file to its machine only.
#   PLATFORM_SECRET=$(cat root.secret) sh deploy/make-env.sh
set -eu
: "${PLATFORM_SECRET:?set PLATFORM_SECRET (at least 32 characters), the platform's root secret}"
out=${OUT_DIR:-deploy/env}
# The `platform` command (the test runs this checkout's directly).
platform=${PLATFORM_COMMAND:-npx --no-install platform}
mkdir -p "$out"
umask 077
# Every service you deploy that takes a derived secret (the daemons get theirs from the router; the development
# identity provider is not deployed).
for service in scheduler settlement marketplace gateway memory contracts connector router; do
  $platform secret --for "$service" > "$out/$service.env"
  echo "wrote $out/$service.env"
done
