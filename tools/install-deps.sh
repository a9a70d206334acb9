#!/bin/sh
# install-deps.sh [--tests] - installs, from Debian 12's packages, what
# heaptrace needs. Run as root; safe to run again: it installs only the
# packages that are missing, and runs apt-get update only then.
#
#   sh tools/install-deps.sh           building, and the README's first
#                                      command: a C compiler, meson and
#                                      ninja, zlib and libyaml (nothing else
#                                      is required: meson setup
#                                      -Dtests=disabled looks for no test
#                                      tool, and the recorders are built only
#                                      where Mono or a JDK is found)
#   sh tools/install-deps.sh --tests   also everything the whole test suite
#                                      (tools/test-all.sh) needs, as .ci/run
#                                      does; where the .NET SDK (dotnet) is
#                                      on PATH, also the .NET diagnostic
#                                      tools the CoreCLR tests compare with
#                                      (dotnet-gcdump, dotnet-dump, and
#                                      dotnet-trace for the pause
#                                      benchmark), from
#                                      NuGet, into $HEAPTRACE_DOTNET_TOOLS
#                                      (default /opt/heaptrace/dotnet-tools)
set -eu
usage="usage: sh tools/install-deps.sh [--tests]"
tests=false
for arg in "$@"; do
	case $arg in
	--tests) tests=true ;;
	-h|--help) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done

# Building: meson (which brings python3) and ninja, gcc, pkg-config, which
# meson finds zlib and libyaml through, and their headers (zlib1g-dev brings
# libc6-dev).
packages="meson ninja-build gcc pkg-config zlib1g-dev libyaml-dev"

# The whole test suite. libcriterion-dev: the unit tests. clang: the
# ASan+UBSan and TSan builds; libclang-rt-14-dev: clang's sanitizer
# runtimes and libFuzzer (the TSan suite, the fuzz targets). mono-*,
# libmono-*: the Mono recorder, its tests and the log profiler they compare
# with; jq: JSON in the runtime tests. openjdk-17-jdk-headless: the JVMTI
# agent (javac finds the JDK's headers), its test (java, jcmd) and the HPROF
# test's heap dumps; python3 checks them. chromium: the test that opens
# `heaptrace flame --svg` in a headless browser (python3 checks its
# screenshot). valgrind: the memcheck suite. visualvm: the heap library the
# HPROF benchmark times heaptrace against, and whose retained sizes the
# levels and Tomcat tests compare heaptrace's with. groff-base: the man pages' checks
# (they render without a warning; every message is in the catalog).
# cmark-gfm: GitHub's markdown, which renders `diff --format markdown` of
# hostile names in the case names-markdown (no link may come out).
# tomcat10: Debian's Tomcat 10, the real server whose heap dumps the test
# java-tomcat reads; the test runs an instance of its own (the package's
# CATALINA_HOME, a private CATALINA_BASE), and the package's service must
# not run (below); curl: the requests it serves.
test_packages="clang libcriterion-dev
mono-runtime libmono-2.0-dev mono-mcs libmono-profiler mono-utils jq
openjdk-17-jdk-headless python3 chromium
valgrind libclang-rt-14-dev visualvm groff-base cmark-gfm tomcat10 curl"

if $tests; then
	packages="$packages $test_packages"
fi
missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
# No service starts while the packages install: tomcat10's would listen on
# port 8080 and keep a JVM on CI's two cores. Debian's maintainer scripts
# start services through invoke-rc.d or deb-systemd-invoke, which ask
# policy-rc.d first; where there is none, one that refuses (exit 101) is
# there for the install only.
no_start=
allow_starts() {
	[ -z "$no_start" ] || rm -f "$no_start"
}
trap allow_starts EXIT
if [ -n "$missing" ]; then
	export DEBIAN_FRONTEND=noninteractive
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		no_start=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# install-deps.sh: no service starts now\nexit 101\n' \
			>"$no_start"
		chmod 755 "$no_start"
	fi
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
	allow_starts
	no_start=
fi
# and where systemd runs, tomcat10's service is stopped and not started at
# boot, even when the package came otherwise
if $tests && [ -d /run/systemd/system ] &&
	systemctl is-enabled --quiet tomcat10 2>/dev/null; then
	systemctl disable --now tomcat10
fi

# The CoreCLR recorder's tests and benchmark compare its dumps with
# dotnet-gcdump's (and dotnet-dump can look at the same process by hand);
# the pause benchmark runs dotnet-trace for the runtime's own GC movement
# events.
# They are .NET global tools, installed from NuGet with the SDK into one
# directory that the tests know; without an SDK there is no CoreCLR to
# record, and those tests skip themselves.
dotnet_tools_version=10.0.750501
dotnet_tools=${HEAPTRACE_DOTNET_TOOLS:-/opt/heaptrace/dotnet-tools}
if $tests; then
	if command -v dotnet >/dev/null 2>&1; then
		for tool in dotnet-gcdump dotnet-dump dotnet-trace; do
			# installed already at this version: nothing to do
			if [ -x "$dotnet_tools/$tool" ] &&
				dotnet tool list --tool-path "$dotnet_tools" 2>/dev/null |
				grep -qi "^$tool  *$dotnet_tools_version "; then
				continue
			fi
			[ -x "$dotnet_tools/$tool" ] &&
				dotnet tool uninstall --tool-path "$dotnet_tools" "$tool" >/dev/null
			DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
				dotnet tool install --tool-path "$dotnet_tools" "$tool" \
				--version "$dotnet_tools_version"
		done
	else
		echo "install-deps: no dotnet on PATH: the CoreCLR tests will skip themselves"
	fi
fi
