#!/bin/sh
# install-deps.sh - installs, from Debian 12's packages, everything heaptrace
# needs to build, test and benchmark. Run as root; safe to run again.
set -eu
packages="meson ninja-build gcc clang pkg-config zlib1g-dev libyaml-dev
libcriterion-dev"
missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
