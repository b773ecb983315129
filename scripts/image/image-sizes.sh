#!/bin/sh
# The image's sizes: unpacked (what `docker images` shows), compressed (what a registry stores and a pull moves: the
# layers gzipped, as `docker push` sends them), and the parts: the base, the pinned Node, node_modules, the sources.
#   sh scripts/image/image-sizes.sh [image]
set -eu
image=${1:-localhost/platform:$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$(dirname "$0")/../../package.json")}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
podman save --quiet --format oci-dir -o "$work/oci" "$image"
compressed=0
for blob in "$work"/oci/blobs/sha256/*; do
  # Layers are tar archives; the config and manifests are small JSON files.
  if tar -tf "$blob" > /dev/null 2>&1; then compressed=$((compressed + $(gzip -6 -c "$blob" | wc -c))); fi
done
container=$(podman create --quiet "$image")
podman export "$container" | tar -x -C "$work" --exclude=oci 2>/dev/null || true
podman rm --force "$container" > /dev/null
mb() { echo "$1" | awk '{ printf "%.1f MB", $1 / 1000000 }'; }
du_b() { du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
echo "image $image"
echo "  unpacked:            $(mb "$(podman image inspect --format '{{.Size}}' "$image")")"
echo "  compressed (gzip):   $(mb "$compressed")"
echo "  pinned node:         $(mb "$(du_b "$work/usr/local/bin/node")")"
echo "  node_modules:        $(mb "$(du_b "$work/opt/platform/node_modules" "$work"/opt/platform/services/*/node_modules)")"
echo "  platform sources:    $(mb "$(( $(du_b "$work/opt/platform") - $(du_b "$work/opt/platform/node_modules" "$work"/opt/platform/services/*/node_modules) ))")"
echo "  base (libc, sh):     $(mb "$(( $(du_b "$work") - $(du_b "$work/opt" "$work/usr/local" "$work/oci") ))")"
