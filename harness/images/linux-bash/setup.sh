#!/bin/sh
# Runs once inside the image build: installs whatever the base lacks (nothing on the offline
# debootstrap route, everything on the registry route), then adds the unprivileged tool user.
set -eu
here=$(dirname "$0")
missing=""
for pkg in $(cat "$here/packages.txt"); do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
groupadd --gid 1000 toolproof
useradd --uid 1000 --gid 1000 --create-home --home-dir /home/toolproof --shell /bin/bash toolproof
mkdir -p /work
chown 1000:1000 /work
