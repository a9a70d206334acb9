/*
 * fuzz.h - what the fuzz targets share: readers over bytes in memory (no
 * file, no path), a digest of events that touches every byte an event
 * points to, and the check that turns a broken promise into a crash the
 * fuzzer records.
 *
 * Each target defines LLVMFuzzerTestOneInput. Built with -Dfuzzing=true
 * (clang), libFuzzer drives it; in every other build standalone.c does,
 * replaying the seed corpus and the regression inputs once as a test.
 */
#ifndef HT_FUZZ_H
#define HT_FUZZ_H

#include <heaptrace/trace.h>

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* How the bytes reach a source: a seekable stream, or one that cannot
 * seek, as a pipe. */
enum fuzz_stream {
	FUZZ_SEEKABLE,
	FUZZ_PIPE,
};

enum fuzz_form {
	FUZZ_HT,
	FUZZ_YAML,
	FUZZ_HPROF,
	FUZZ_SNIFF, /* as ht_reader_open decides from the first byte */
};

/* A reader over a copy of data[0..size); NULL with err filled when the
 * source refuses it at open. Closed with ht_reader_close. */
struct ht_reader *fuzz_reader(const uint8_t *data, size_t size,
			      enum fuzz_form form, enum fuzz_stream how,
			      struct ht_error *err);

/* Mixes every field of ev, and every element of its arrays, into h. */
uint64_t fuzz_digest_event(uint64_t h, const struct ht_event *ev);

/* Checks what every reader promises of an error: a code and a message. */
void fuzz_check_error(const struct ht_error *err, const char *where);

/* Replays a reader of data through the protocol state machine, then
 * builds every dump's graph with its dominators and root paths, checking
 * every answer (fuzz_analyses.c). */
void fuzz_replay_and_analyse(const uint8_t *data, size_t size,
			     enum fuzz_form form);

/* Prints "fuzz: CHECK FAILED: ..." and aborts, which libFuzzer reports as
 * a crash with the input that caused it. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						    noreturn));

#define FUZZ_CHECK(cond, ...)                 \
	do {                                  \
		if (!(cond))                  \
			fuzz_fail(__VA_ARGS__); \
	} while (0)

#endif
