/*
 * pass_log.h - the chunks one pass over a .ht file read, so that a later
 * pass over the same input can tell that the file changed under it.
 *
 * The commands that read a trace twice (stats, history) check between
 * passes that the file is the same one, of the same size and time; a
 * trace rewritten in place while the last pass reads it, or rewritten
 * with its time put back, passes that check, and the answer would mix
 * two traces. So the first pass notes the offset, length and payload CRC
 * of each chunk it reads whole, as its scan takes it (a chunk a second
 * thread inflated ahead that the scan never took is not noted), and each
 * later pass, which reads from the start as the first did, finds the same
 * chunks at the same offsets or says the file changed. A later pass may stop before the first did, or
 * go on where the first stopped: only the chunks both read are compared.
 * YAML and HPROF carry no checksums to compare; their passes are checked
 * by the file's size and time alone.
 *
 * What the log holds (16 bytes a chunk) is charged to the memory budget.
 */
#ifndef HT_LIB_READ_PASS_LOG_H
#define HT_LIB_READ_PASS_LOG_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* This struct is not an API; it may change from one release to the next. */
struct pass_chunk {
	uint64_t offset;
	uint32_t length;  /* of the stored payload */
	uint32_t crc;     /* of the stored payload */
};

/* This struct is not an API; it may change from one release to the next. */
struct pass_log {
	struct pass_chunk *chunk;
	size_t n, cap;
	uint64_t charged;
	unsigned passes;  /* begun */
	size_t next;      /* a later pass: the chunk it should read next */
	bool changed;     /* a later pass found the file changed */
};

/* Not exported from libheaptrace-read (no ht_ prefix): the log is how
 * heaptrace's own commands compare passes, not an API.
 *
 * Makes r note its chunks in log, which must outlive r: the first reader
 * given a log records, each later one compares. A reader of another form
 * than .ht notes nothing. */
void reader_log_passes(struct ht_reader *r, struct pass_log *log);

/* Notes a chunk read whole, its CRC checked: 0; 1 when a later pass finds
 * it other than the first pass did (the file changed); -1 when the log
 * cannot grow (memory, or the budget: mem_budget_exceeded() says). */
int pass_log_note(struct pass_log *log, uint64_t offset, uint32_t length,
		  uint32_t crc);

void pass_log_free(struct pass_log *log);

#endif
