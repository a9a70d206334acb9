/*
 * fuzz_hprof.c - fuzz target: any bytes as an HPROF heap dump. The HPROF
 * source must refuse or read them without crashing, hanging or allocating
 * what the file does not hold, and tell the same story whether it reads a
 * file or a pipe (which it first copies to a temporary file): the same
 * events, then the same kind of end. What it reads is then replayed and
 * analysed like any trace, every answer checked (fuzz_analyses.c).
 */
#include "fuzz.h"

#include <stdbool.h>
#include <string.h>

struct outcome {
	bool opened;
	int end;
	uint64_t events;
	uint64_t digest;
};

static void read_all(const uint8_t *data, size_t size, enum fuzz_stream how,
		     struct outcome *o)
{
	struct ht_reader *r;
	struct ht_error err, again;
	struct ht_event ev;
	int rc;

	memset(o, 0, sizeof(*o));
	r = fuzz_reader(data, size, FUZZ_HPROF, how, &err);
	if (!r)
		return;
	o->opened = true;
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		o->digest = fuzz_digest_event(o->digest, &ev);
		o->events++;
	}
	FUZZ_CHECK(rc == 0 || rc == -1, "ht_reader_next returned %d", rc);
	if (rc < 0)
		fuzz_check_error(&err, "hprof reader");
	FUZZ_CHECK(ht_reader_next(r, &ev, &again) == rc,
		   "the end of the input did not repeat");
	o->end = rc;
	ht_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome file, pipe;

	read_all(data, size, FUZZ_SEEKABLE, &file);
	read_all(data, size, FUZZ_PIPE, &pipe);
	FUZZ_CHECK(file.opened == pipe.opened,
		   "opened as a file: %d, as a pipe: %d", file.opened,
		   pipe.opened);
	if (!file.opened)
		return 0;
	FUZZ_CHECK(file.events == pipe.events && file.digest == pipe.digest &&
		   file.end == pipe.end,
		   "a file yields %llu events and ends with %d, a pipe %llu "
		   "and %d", (unsigned long long)file.events, file.end,
		   (unsigned long long)pipe.events, pipe.end);
	fuzz_replay_and_analyse(data, size, FUZZ_HPROF);
	return 0;
}
