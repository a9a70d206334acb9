/*
 * htbuild.h - a test-only builder of .ht files, written from the layout in
 * format.h independently of the library's writer, so that the reader can be
 * tested before the writer exists and the writer can later be checked
 * against it. Also: comparing events, a sample trace of a few dumps and GCs
 * in several chunks, opening a trace held in memory (seekable) or fed
 * through a pipe (not seekable), and the events of a trace written by hand
 * (struct htb_events), which the analyses' tests replay or write.
 */
#ifndef HT_HTBUILD_H
#define HT_HTBUILD_H

#include <heaptrace/trace.h>

#include "lib/common/format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* This struct is not an API; it may change from one release to the next. */
struct htb_chunk {
	uint64_t offset;      /* of the chunk header */
	uint64_t end;         /* one past the payload */
	uint64_t first_event;
	uint32_t events;
};

/* This struct is not an API; it may change from one release to the next. */
struct htb_entry {
	unsigned kind; /* HT_INDEX_DUMP, HT_INDEX_GC */
	uint64_t event;
	uint64_t offset;
};

/* This struct is not an API; it may change from one release to the next. */
struct htb {
	uint8_t *data;
	size_t len, cap;
	uint64_t header_end;

	/* every event written, shallow copies: arrays stay the caller's */
	struct ht_event *events;
	size_t n_events, events_cap;
	uint64_t *payload_offsets; /* each event's offset in its chunk */

	struct htb_chunk *chunks; /* event chunks */
	size_t n_chunks, chunks_cap;

	struct htb_entry *entries;
	size_t n_entries, entries_cap;
	uint64_t dumps, gcs;

	/* what the index reports of the recording shim */
	uint64_t violations[32];
	uint64_t dropped_events;

	uint64_t index_offset; /* set by htb_index_chunk */
	uint64_t index_end;
};

/* The file header, with HT_FORMAT_VERSION or the given version. */
void htb_start(struct htb *b, const struct ht_header *h);
void htb_start_version(struct htb *b, const struct ht_header *h,
		       uint32_t version);
/* One event chunk holding evs. */
void htb_chunk(struct htb *b, const struct ht_event *evs, size_t n);
/* A chunk with the given payload as is, for malformed payloads; it is not
 * recorded in b->chunks. */
void htb_raw_chunk(struct htb *b, uint8_t kind, const void *payload,
		   size_t len, uint64_t first_event, uint32_t events);
/* For hand-made chunks: raw compressed with zlib (malloc'd, *stored_len
 * set), and a chunk header as given (its own CRC computed) followed by the
 * stored bytes as given. */
uint8_t *htb_compress(const void *raw, size_t len, size_t *stored_len);
void htb_chunk_as_is(struct htb *b, const struct ht_chunk_header *h,
		     const void *stored, size_t stored_len);
/* The index chunk, then the trailer pointing at it; htb_finish does both. */
void htb_index_chunk(struct htb *b);
void htb_trailer(struct htb *b);
void htb_finish(struct htb *b);
void htb_append(struct htb *b, const void *bytes, size_t n);
void htb_free(struct htb *b);

/* Deep equality, optional arrays' presence included. */
bool htb_event_equal(const struct ht_event *a, const struct ht_event *b);
/* A short description of where two events differ, for test messages. */
const char *htb_event_diff(const struct ht_event *a, const struct ht_event *b);

/* A header with metadata, used by the sample trace. */
const struct ht_header *htb_sample_header(void);
/* A trace of classes, three dumps and two GCs over six chunks, every event
 * type and optional field present somewhere; with or without index. */
void htb_sample(struct htb *b, bool with_index);

/* Whether the readers below read ahead on a second thread
 * (ht_reader_options.read_ahead); off unless a test sets it. */
extern bool htb_read_ahead;

/* Readers over bytes: from memory (seekable), or written by a child
 * process into a pipe (not seekable; *child for waitpid). NULL and err
 * filled when binary_source_open refuses. */
struct ht_reader *htb_open_memory(const void *data, size_t len,
				  struct ht_error *err);
struct ht_reader *htb_open_pipe(const void *data, size_t len, pid_t *child,
				struct ht_error *err);

/* Reads b from memory to its end, and returns the error that ended it:
 * the test fails if b does not open, or reads without error. */
struct ht_error htb_read_error(const struct htb *b);

/*
 * Events written by hand, one call an event, each zeroed but for its type,
 * and copies of the arrays they point to, which live until htb_ev_free
 * (htb_ev_reset forgets the events and keeps the copies, which a graph
 * built from them may still hold): the traces of the analyses' tests, fed
 * to a replay or written with htb_chunk. ev moves as it grows: a pointer
 * htb_ev_add returns is good until the next event.
 * This struct is not an API; it may change from one release to the next.
 */
struct htb_events {
	struct ht_event *ev;
	size_t n, cap;
	void **copies;
	size_t n_copies, copies_cap;
};

struct ht_event *htb_ev_add(struct htb_events *l, enum ht_event_type type);
/* A copy of n items of size bytes, never NULL (even for n == 0). */
const void *htb_ev_keep(struct htb_events *l, const void *items, size_t n,
			size_t size);
void htb_ev_reset(struct htb_events *l);
void htb_ev_free(struct htb_events *l);

/* The events the analyses' traces are made of; the arrays are copied. */
void htb_ev_class(struct htb_events *l, ht_id id, const char *name);
void htb_ev_thread(struct htb_events *l, ht_id id, const char *name);
void htb_ev_container(struct htb_events *l, enum ht_container_type type,
		      ht_id id1, ht_id id2);
struct ht_ev_root_references *htb_ev_roots(struct htb_events *l,
					   const ht_id *refs, size_t n);
/* refs NULL when n is 0. */
struct ht_ev_object_references *htb_ev_object(struct htb_events *l, ht_id id,
					      ht_id cls, uint64_t size,
					      const ht_id *refs, size_t n);
void htb_ev_allocated(struct htb_events *l, ht_id id, ht_id cls,
		      uint64_t size);
struct ht_ev_gc_started *htb_ev_gc_started(struct htb_events *l,
					   uint32_t generations);
void htb_ev_gc_finished(struct htb_events *l);
void htb_ev_bounds(struct htb_events *l,
		   const struct ht_generation_range *ranges, size_t n);
void htb_ev_moved(struct htb_events *l, const struct ht_moved_block *blocks,
		  size_t n);
void htb_ev_surviving(struct htb_events *l,
		      const struct ht_surviving_block *blocks, size_t n);

/* HTB_ARRAY(type, ...): a compound array of type and its length, as two
 * arguments, for the makers above. */
#define HTB_ARRAY(type, ...) ((const type[]){__VA_ARGS__}),             \
	(sizeof((const type[]){__VA_ARGS__}) / sizeof(type))

#endif
