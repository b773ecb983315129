#!/bin/sh
# Builds the image's file tree: what the Containerfile's `tree` stage runs (`docker build`), and what
# scripts/image/build-image.sh runs on this machine instead (where a RUN step cannot run) before handing the tree to
# `podman build --build-context tree=<dir>`. Both give the final stage the same files.
#
#   sh scripts/image/build-tree.sh <out dir>
#
# Takes a checkout whose node_modules is installed (`npm ci`: the pinned Node, the daemon's bundle and the console's
# build come from there) and writes into <out dir>/root (root's files, read-only to the services):
#   opt/platform/     the services' sources (no tests, benches or Solidity sources), the daemon's bundle, the console's
#                     build, and node_modules with production dependencies only, less what no service runs
#   usr/local/bin/    node (the pinned one, stripped of debug symbols), tini (static) and `platform`, the entrypoint
#   etc/              passwd and group with the non-root user platform (10001), nsswitch.conf
# and <out dir>/volume/data, the one folder the services write (copied with --chown to the user).
set -eu

out=${1:?usage: build-tree.sh <out dir>}
repo=$(cd "$(dirname "$0")/../.." && pwd)
root="$out/root"
app="$root/opt/platform"
node="$repo/node_modules/node/bin/node"
[ -x "$node" ] || { echo "build-tree: $node is missing: run npm ci first" >&2; exit 1; }
[ -f "$repo/services/daemon/dist/main.js" ] || { echo "build-tree: the daemon's bundle is missing: npm run build -w @platform/daemon" >&2; exit 1; }
[ -f "$repo/web/console/dist/index.html" ] || { echo "build-tree: the console's build is missing: npm run build -w @platform/console" >&2; exit 1; }
tini=$(command -v tini-static || true)
[ -n "$tini" ] || { echo 'build-tree: tini-static is missing: apt-get install tini' >&2; exit 1; }

rm -rf "$out"
mkdir -p "$app" "$root/usr/local/bin" "$root/etc" "$root/tmp" "$out/volume/data"

# What runs: package manifests (every workspace's, so the lockfile matches), the sources of the workspaces a service
# loads, and the data files their code reads (rate cards, contract artifacts). Tests, benches, Solidity sources and
# the console's sources stay out.
cd "$repo"
{
  printf '%s\n' package.json package-lock.json
  for manifest in packages/*/package.json services/*/package.json web/*/package.json cli/package.json; do echo "$manifest"; done
  find packages/kit/src packages/client/src cli/bin cli/src services/*/src -type f ! -name '*.test.ts'
  find services/gateway/rate-cards services/daemon/dist web/console/dist -type f
  ls services/*/contracts/artifacts.json
  # `platform up` imports the freshness checks of the bundle and the console (esbuild and Vite only when stale); the
  # image runs `platform serve`, which never rebuilds either.
  printf "%s\n" services/daemon/scripts/bundle.mjs web/console/scripts/build.ts
} | tar -c -T - -f - | tar -x -f - -C "$app"

# Production dependencies of the workspaces that run (not the testkit, the packaging tests or the console, whose
# build is plain files), from the lockfile, without install scripts (the pinned Node is copied below; nothing else
# the services run needs a script: sodium-native and EDR ship their prebuilt bindings).
cd "$app"
workspaces=''
for name in kit client; do workspaces="$workspaces -w @platform/$name"; done
for dir in "$repo"/services/*/; do workspaces="$workspaces -w @platform/$(basename "$dir")"; done
# Under the pinned Node (first on PATH for npm's own `node`): npm under an older Node skips optional packages whose
# engines ask for more, such as EDR's native binding, and the contract engine could not run a test.
# shellcheck disable=SC2086
PATH="$(dirname "$node"):$PATH" npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error -w @platform/cli $workspaces < /dev/null
# One bundle per dependency of hundreds of files, as the checkout's install builds them (with the checkout's esbuild):
# a service loads a few modules where it would resolve ~1,000 files one by one (cli/bin/vendor-bundles.js).
"$node" "$repo/scripts/vendor-bundles.mjs" "$app"

# Cut what no service runs: the packaging's own workspaces; the local chain node (in production the chain is a
# setting: CONTRACTS_LOCAL_NODE=external); TypeScript 7, installed as an optional peer of viem for its types;
# sodium-native's prebuilt bindings for other systems; the second PGlite under the memory server (pglite-pgvector
# never imports it: the kit's PGlite loads the extension); type declarations, source maps, TypeScript sources (Node
# does not run them from node_modules) and documentation. esbuild stays: the marketplace's hosted mode bundles every
# upload with it (the marketplace does not start without it).
rm -rf node_modules/@platform/testkit node_modules/@platform/deploy-tests node_modules/@platform/console packages/testkit packages/deploy-tests
rm -rf node_modules/@foundry-rs node_modules/typescript node_modules/@typescript
rm -rf node_modules/.bin node_modules/.package-lock.json services/memory/node_modules/@electric-sql/pglite
arch=$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')
find node_modules/sodium-native/prebuilds -mindepth 1 -maxdepth 1 ! -name "linux-$arch" -exec rm -rf {} +
find . -path '*/node_modules/*' -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.ts' -o -name '*.md' -o -name '*.markdown' \) -delete
find . -path '*/node_modules/*' -type d -empty -delete

# The pinned Node (the `node` package the project pins), without its debug symbols (18 MB no service reads).
strip --strip-all -o "$root/usr/local/bin/node" "$node"
cp "$tini" "$root/usr/local/bin/tini"
cp "$repo/scripts/image/platform" "$root/usr/local/bin/platform"
cp "$repo/scripts/image/healthcheck.mjs" "$app/healthcheck.mjs"
chmod 0755 "$root/usr/local/bin/node" "$root/usr/local/bin/tini" "$root/usr/local/bin/platform"

# The one user: the services run as platform (10001), never root; /data (the volume) and /tmp are its to write.
cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
platform:x:10001:10001:platform:/data:/usr/sbin/nologin
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
platform:x:10001:
EOF
# Without this file glibc asks DNS before /etc/hosts and stops at DNS's "no such name" (localhost included).
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod 1777 "$root/tmp"
chmod 0700 "$out/volume/data"
echo "build-tree: $(du -sh "$out" | cut -f1) in $out"
