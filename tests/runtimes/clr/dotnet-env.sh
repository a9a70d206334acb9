# dotnet-env.sh - sourced, not run: the environment in which the CoreCLR
# tests and benchmark build C# with the .NET SDK. Everything the SDK writes
# (its first-run marker, NuGet's caches and packages) stays under the build
# directory $dotnet_dir, which the including script sets first, never in
# the user's home; no telemetry, no banner.
# Only the SDK's own targeting pack is needed for the runtime the SDK
# brings; older runtimes' packs come from NuGet (dotnet_publish_for).
dotnet_home=$dotnet_dir/dotnet-home
mkdir -p "$dotnet_home"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
	DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 DOTNET_CLI_HOME="$dotnet_home" \
	HOME="$dotnet_home" NUGET_PACKAGES="$dotnet_dir/nuget-packages" \
	DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1 \
	DOTNET_GENERATE_ASPNET_CERTIFICATE=false MSBUILDDISABLENODEREUSE=1 \
	DOTNET_CLI_USE_MSBUILD_SERVER=0

# The .NET diagnostic tools that tools/install-deps.sh --tests installs.
dotnet_tools=${HEAPTRACE_DOTNET_TOOLS:-/opt/heaptrace/dotnet-tools}

# dotnet_tool NAME: the path of a .NET diagnostic tool, or nothing.
dotnet_tool() {
	if [ -x "$dotnet_tools/$1" ]; then
		echo "$dotnet_tools/$1"
	else
		command -v "$1" 2>/dev/null
	fi
}

# gcdump_report TOOL PID DIR SECONDS: dotnet-gcdump (TOOL) collects from
# process PID (a full GC, within SECONDS) into DIR/heap.gcdump and reports
# it into DIR/gcdump.txt, its words in DIR/gcdump.log; fails if either
# step does.
gcdump_report() {
	timeout -k 5 "$4" "$1" collect -p "$2" -o "$3/heap.gcdump" \
		>"$3/gcdump.log" 2>&1 &&
		timeout -k 5 60 "$1" report "$3/heap.gcdump" \
		>"$3/gcdump.txt" 2>>"$3/gcdump.log"
}

# dotnet_build PROJECT_DIR OUT_DIR: builds the project for the SDK's own
# runtime (framework-dependent, run with `dotnet OUT_DIR/NAME.dll`).
dotnet_build() {
	dotnet build "$1" -c Release -o "$2" -nologo -v quiet -clp:NoSummary
}

# dotnet_publish_for TFM PROJECT_DIR OUT_DIR: publishes the project
# self-contained for an older runtime (net8.0, net9.0), its runtime pack,
# reference pack and apphost restored from NuGet: run as OUT_DIR/NAME.
dotnet_publish_for() {
	timeout -k 5 300 dotnet publish "$2" -c Release \
		-p:KnownHeapFramework="$1" -r linux-x64 --self-contained \
		-p:UseAppHost=true -o "$3" -nologo -v quiet -clp:NoSummary
}

# program_build NAME SRC_DIR BUILD_DIR: builds a test's own program,
# SRC_DIR/NAME.cs with its NAME.csproj, into BUILD_DIR/out, offline (an
# empty package source: the program needs no NuGet package); on failure
# shows the SDK's log and says FAIL.
program_build() {
	mkdir -p "$3/project" "$3/no-source" &&
		cp "$2/$1.cs" "$2/$1.csproj" "$3/project/" || return 1
	dotnet build "$3/project/$1.csproj" -c Release -o "$3/out" \
		--source "$3/no-source" -nodeReuse:false \
		>"$3/dotnet-build.log" 2>&1 && return 0
	cat "$3/dotnet-build.log"
	echo "FAIL: dotnet build of $1.cs"
	return 1
}

# sanitizer_runtime HEAPTRACE: in a build whose HT_SANITIZE names
# address (HT_CC the compiler, as meson gives the tests both), the path of
# the AddressSanitizer runtime the CLR recorder beside HEAPTRACE links,
# for sanitized_dotnet; nothing in another build.
sanitizer_runtime() {
	case ${HT_SANITIZE:-none} in
	*address*) ;;
	*) return 0 ;;
	esac
	sr_lib=$(ldd "$(dirname "$1")/../recorders/clr/libheaptrace-clr.so" \
		2>/dev/null | awk '/libasan|libclang_rt.asan/ { print $3 }')
	[ -n "$sr_lib" ] ||
		sr_lib=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
	echo "$sr_lib"
}

# sanitized_dotnet RUNTIME DIR [signals]: in a sanitizer build the
# recorder is instrumented and dotnet is not, so every dotnet the test
# starts preloads RUNTIME (the sanitizer's shared library) through a
# `dotnet` in DIR/bin, put first on PATH; the runtime leaks by design, so
# leaks are not reported. With `signals`, the sanitizer installs no
# handler of SIGSEGV, SIGBUS, SIGFPE or SIGILL and lets the program install
# its own: those are the runtime's, which turns them into managed
# exceptions (a null reference is a SIGSEGV); attach-test.sh and
# layouts-test.sh ask for it. Options in ASAN_OPTIONS come
# after these, and win. Exits 77 (skipped) where RUNTIME is missing.
sanitized_dotnet() {
	[ -f "$1" ] || {
		echo "SKIP: sanitizer build, no runtime '$1' to preload into dotnet"
		exit 77
	}
	sd_asan=detect_leaks=0:abort_on_error=1
	case ${3:-} in
	signals)
		sd_asan=$sd_asan:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 ;;
	'') ;;
	*)
		echo "sanitized_dotnet: unknown option '$3'" >&2
		exit 2 ;;
	esac
	mkdir -p "$2/bin"
	cat >"$2/bin/dotnet" <<WRAPPER
#!/bin/sh
LD_PRELOAD=$1\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=$sd_asan\${ASAN_OPTIONS:+:\$ASAN_OPTIONS} \\
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \\
exec $(command -v dotnet) "\$@"
WRAPPER
	chmod +x "$2/bin/dotnet"
	PATH=$2/bin:$PATH
}
