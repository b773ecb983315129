#!/bin/sh
# Builds the Containerfile's image on a machine where a RUN step cannot run (this one: no container can start) but
# `podman build` can FROM, COPY, USER and CMD:
#   1. a base from Debian's packages (mmdebstrap: libc, libstdc++, dash; no apt, no docs), imported into podman;
#   2. the `tree` stage's files, made by scripts/image/build-tree.sh outside any container;
#   3. `podman build` of the Containerfile with that base and `--build-context tree=...`, which stands in for the
#      `tree` stage (its RUN steps are not run), so the final stage is the one `docker build` makes.
#
#   sh scripts/image/build-image.sh            prints the image's name on its last line
#
# Caches under node_modules/.cache/platform-image (outside what git tracks): the base tarball, rebuilt when absent.
# Settings: IMAGE (localhost/platform:<version>), PLATFORM_IMAGE_CACHE (that folder).
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PLATFORM_IMAGE_CACHE:-$repo/node_modules/.cache/platform-image}
version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json")
image=${IMAGE:-localhost/platform:$version}
base_image=localhost/platform-base:bookworm
suite=bookworm
base_packages=libc6,libstdc++6,libgcc-s1,dash
mkdir -p "$cache"

# The tools, from Debian's packages; installed once (quick when present).
missing=''
for tool in strace:strace podman:podman buildah:buildah mmdebstrap:mmdebstrap bwrap:bubblewrap tini-static:tini strip:binutils setpriv:util-linux; do
  command -v "${tool%%:*}" > /dev/null || missing="$missing ${tool#*:}"
done
if [ -n "$missing" ]; then
  apt-get update -qq < /dev/null
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing < /dev/null > /dev/null
fi

# 1. The base: only the libraries the pinned Node links (ldd: libc, libm, libstdc++, libgcc_s) and a shell for the
#    entrypoint; no apt, no dpkg database, no documentation or locales.
base_tar="$cache/base-$suite.tar"
if [ ! -s "$base_tar" ]; then
  mmdebstrap --quiet --format=tar --variant=extract --include="$base_packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/gconv/*' \
    "$suite" "$base_tar.part" http://deb.debian.org/debian
  mv "$base_tar.part" "$base_tar"
fi
base_id=$(sha256sum "$base_tar" | cut -c1-16)
if [ "$(podman image inspect --format '{{index .Labels "platform.base"}}' "$base_image" 2>/dev/null || true)" != "$base_id" ]; then
  podman import --quiet --change "LABEL platform.base=$base_id" "$base_tar" "$base_image" > /dev/null
fi

# 2. The tree stage's files, in a folder named as the stage writes them (/tree).
rm -rf "$cache/context"
sh "$repo/scripts/image/build-tree.sh" "$cache/context/tree" >&2

# 3. The Containerfile's final stage. Docker's format keeps HEALTHCHECK (OCI's image config has no field for it).
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
podman build --quiet --format docker --build-context tree="$cache/context" \
  --build-arg BASE="$base_image" --build-arg VERSION="$version" --build-arg REVISION="$revision" \
  -t "$image" -f "$repo/Containerfile" "$repo" > /dev/null
echo "$image"
