#!/bin/sh
# valgrind-test.sh TEST [ARGS...] - meson's --wrapper for the valgrind
# suite of test-all.sh: runs one test with this project's programs under
# valgrind memcheck, and fails it when memcheck reports anything (an
# invalid access, a use of uninitialised memory, a definite leak), whatever
# the test itself concluded.
#
#   - a command-level case (run-case.sh, which finds heaptrace through
#     $HEAPTRACE) runs as usual, with $HEAPTRACE replaced by a script that
#     runs heaptrace under memcheck: the shell and the tools the case uses
#     are not ours to check;
#   - any other program runs under memcheck with its children (Criterion
#     runs each test in a child process of its own).
#
# Every report goes to a log of its own, so that a test that checks its
# standard error, or ignores an exit status, cannot hide one.
set -uf
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
memcheck="valgrind --error-exitcode=99 --leak-check=full
	--show-leak-kinds=definite --errors-for-leak-kinds=definite
	--trace-children=yes --trace-children-skip=/bin/*,/usr/bin/*,/sbin/*,/usr/sbin/*
	-q --log-file=$logs/memcheck.%p.log"

if [ -n "${HEAPTRACE:-}" ]; then
	printf '#!/bin/sh\nexec %s %s "$@"\n' "$(echo $memcheck)" \
		"$HEAPTRACE" >"$logs/heaptrace"
	chmod +x "$logs/heaptrace"
	HEAPTRACE=$logs/heaptrace "$@"
	status=$?
else
	# shellcheck disable=SC2086
	$memcheck "$@"
	status=$?
fi
set +f
if cat "$logs"/memcheck.*.log 2>/dev/null | grep -q .; then
	echo "=== valgrind memcheck found problems:"
	cat "$logs"/memcheck.*.log
	[ "$status" = 0 ] && status=1
fi
exit "$status"
