# lib.sh - what the shell tests share; sourced, not run.

# need_tools TOOL...: exits 77, which meson counts as skipped, when a tool
# the test needs is not installed.
need_tools() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || {
			echo "SKIP: no $tool"
			exit 77
		}
	done
}

# fail WHAT: says what went wrong and marks the test failed ($status), but
# lets it go on to check the rest.
fail() {
	echo "FAIL: $*" >&2
	status=1
}
