# mono-env.sh - sourced by the Mono tests: what each needs to run mono.
#
# sanitized_mono SANITIZER_RUNTIME WORK: in a sanitizer build the module
# is instrumented and mono, which is not, does not start the sanitizer's
# runtime: puts first on PATH a `mono` wrapper (in WORK/bin) that
# preloads SANITIZER_RUNTIME (the ASan shared library) into every mono
# the test starts, so that the module runs checked. mono leaks by design,
# so leaks are not reported. Exits 77 (skipped) when that runtime is not
# there.
sanitized_mono() {
	[ -f "$1" ] ||
		{ echo "SKIP: sanitizer build, no runtime '$1' to preload into mono"; exit 77; }
	mkdir "$2/bin"
	cat >"$2/bin/mono" <<WRAPPER
#!/bin/sh
LD_PRELOAD=$1\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1\${ASAN_OPTIONS:+:\$ASAN_OPTIONS} \\
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \\
exec $(command -v mono) "\$@"
WRAPPER
	chmod +x "$2/bin/mono"
	PATH=$2/bin:$PATH
	echo "note: mono runs with $1 preloaded"
}
