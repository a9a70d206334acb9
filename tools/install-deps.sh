#!/bin/sh
# install-deps.sh - installs, from Debian 12's packages, everything heaptrace
# needs to build, test and benchmark. Run as root; safe to run again.
set -eu
# mono-*, libmono-*: the Mono recorder, its tests and the log profiler they
# compare with; jq: JSON in the runtime tests. openjdk-17-jdk-headless: the
# JVMTI agent (javac finds the JDK's headers), its test (java, jcmd) and
# python3 that checks its dumps. chromium: the test that opens `heaptrace
# flame --svg` in a headless browser (python3 checks its screenshot).
# valgrind: the memcheck suite; libclang-rt-14-dev: clang's sanitizer
# runtimes and libFuzzer (the TSan suite, the fuzz targets). The JDK also
# makes the HPROF test's heap dumps; visualvm: the heap library the HPROF
# benchmark times heaptrace against. groff-base: the man pages' checks
# (they render without a warning; every message is in the catalog).
packages="meson ninja-build gcc clang pkg-config zlib1g-dev libyaml-dev
libcriterion-dev
mono-runtime libmono-2.0-dev mono-mcs libmono-profiler mono-utils jq
openjdk-17-jdk-headless python3 chromium
valgrind libclang-rt-14-dev visualvm groff-base"
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
