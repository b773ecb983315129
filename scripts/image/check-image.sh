#!/bin/sh
# Builds the image here (scripts/image/build-image.sh) and checks it: packages/deploy-tests/test/image.test.ts unpacks
# its root filesystem and runs each service's entrypoint in it with bubblewrap, as the image's user, checking
# /healthz, the HEALTHCHECK command, the user, a clean stop on SIGTERM, and that nothing it runs is missing.
# Needs PostgreSQL (TEST_DATABASE_URL, default the machine's at 127.0.0.1:5432). Each start runs under strace: the
# files the services open (opened-files.tsv in the cache folder) are what they need at run time, a lower bound (what
# loads on first use, such as solc's compiler or the MCP client, is opened only when used). Prints the sizes at the end.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
started=$(date +%s)
image=$(sh scripts/image/build-image.sh | tail -n 1)
built=$(date +%s)
export PLATFORM_IMAGE="$image"
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export PLATFORM_IMAGE_TRACE="$repo/node_modules/.cache/platform-image/trace"
rm -rf "$PLATFORM_IMAGE_TRACE"
mkdir -p "$PLATFORM_IMAGE_TRACE"
PATH="$repo/node_modules/.bin:$PATH" NODE_COMPILE_CACHE="$repo/node_modules/.cache/node-compile-cache" \
  node --test --test-concurrency=1 packages/deploy-tests/test/image.test.ts
checked=$(date +%s)
awk -F'\t' '{ s += $1 } END { printf "needed at run time: %.1f MB in %d files (opened by the nine starts)\n", s / 1000000, NR }' "$PLATFORM_IMAGE_TRACE/opened-files.tsv"
sh scripts/image/image-sizes.sh "$image"
echo "built in $((built - started)) s, checked in $((checked - built)) s"
