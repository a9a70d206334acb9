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

# wait_lines FILE PATTERN [COUNT [PID]]: waits up to 60 s until COUNT
# lines (default 1) of FILE match PATTERN (grep's); fails sooner when
# process PID, if given, is gone.
wait_lines() {
	wr_i=0
	# a file not there yet counts no lines (grep -c then prints nothing)
	while wr_n=$(grep -c "$2" "$1" 2>/dev/null); [ "${wr_n:-0}" -lt "${3:-1}" ]; do
		if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then
			return 1
		fi
		wr_i=$((wr_i + 1))
		[ $wr_i -le 600 ] || return 1
		sleep 0.1
	done
}

# wait_ready FILE [COUNT [PID]]: wait_lines for lines that start with
# "ready", as the test programs print when their heap is built.
wait_ready() {
	wait_lines "$1" '^ready' "${2:-1}" "${3:-}"
}

# child_of PID: prints the pid of a child of process PID (the program that
# heaptrace record runs), waiting up to 5 s for it to start.
child_of() {
	co_i=0
	while :; do
		co_pid=$(awk -v p="$1" '/^PPid:/ && $2 == p {
			split(FILENAME, f, "/"); print f[3]; exit }' \
			/proc/[0-9]*/status 2>/dev/null)
		[ -n "$co_pid" ] && { echo "$co_pid"; return 0; }
		co_i=$((co_i + 1))
		[ $co_i -le 50 ] || return 1
		sleep 0.1
	done
}
