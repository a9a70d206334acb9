/*
 * heaptrace/record.h - the recording shim (libheaptrace).
 *
 * A profiler calls one ht_<event> function from each callback body; each
 * call appends one event to a compressed .ht trace. The functions mirror
 * the callbacks' arguments (arrays with counts, flags, the result the
 * profiler returns).
 *
 * What a caller may rely on (see libheaptrace(3)):
 *  - Every ht_<event> function is thread-safe and may be called from any
 *    number of threads at once.
 *  - They call no malloc and take no lock: they encode into a buffer owned
 *    by the calling thread and hand full buffers to a writer thread through
 *    lock-free queues, so they are safe inside a stop-the-world pause where
 *    suspended threads may hold the C library's locks. They block only when
 *    no buffer is free (all are being filled or waiting to be written),
 *    and then on a semaphore the writer thread (which takes no lock
 *    either) posts; the ends and starts of dumps and GCs also wait at most
 *    50 microseconds for a thread that is in the middle of an event.
 *  - They never abort the process. A failure is returned as an error code
 *    and, for a write failure, stops the recording: later calls return
 *    HT_E_STATE and cost almost nothing. ht_recorder_close still writes
 *    what it can.
 *  - The end of every dump (C_END) and every GC (gc_finished) hands that
 *    group's events to the writer at once, so a crash loses at most the
 *    group in flight.
 *  - Protocol violations are counted and recorded, never refused.
 *
 * A recorder includes this header alone. What only a producer calls is
 * declared here (ht_array_values_of among it); the events' vocabulary
 * that readers share (ids, kinds, flags, struct ht_field, struct
 * ht_array_values, ht_value_type_width) comes with <heaptrace/trace.h>,
 * which this header includes, and libheaptrace exports it as
 * libheaptrace-read does.
 */
#ifndef HEAPTRACE_RECORD_H
#define HEAPTRACE_RECORD_H

#include <heaptrace/trace.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ht_recorder;

/* What a producer keeps of a primitive array whose length elements of
 * type lie little-endian at bytes: all of them up to HT_VALUES_WHOLE_MAX
 * bytes, else the first HT_VALUES_PREFIX bytes and the hash of all. *out's
 * data points into bytes. False (nothing set) when type is no primitive. */
bool ht_array_values_of(unsigned type, const uint8_t *bytes, uint64_t length,
			struct ht_array_values *out);

struct ht_record_options {
	/* Uncompressed bytes per buffer (one buffer becomes one chunk);
	 * 0 = default (1 MiB). Smaller values are raised to 128 KiB, so
	 * that an event with a 64 KiB string fits; at most 64 MiB. */
	size_t buffer_size;
	/* Buffers allocated at open, shared by all recording threads;
	 * 0 = default (32). */
	unsigned buffers;
	/* zlib level 0..9; -1 = default (1, fastest). */
	int compression_level;
	/* Most threads that may record; 0 = default (256). */
	unsigned max_threads;
	/* Stamp each gc_started, gc_finished and each dump's C_BEGIN and C_END
	 * with the time (CLOCK_MONOTONIC nanoseconds since the open), unless
	 * the event carries one already (ht_record_event with has_time). Off
	 * by default, so that a trace recorded twice is byte-identical; only
	 * a version 3 trace (the default) holds times. */
	bool times;
};

/* Opens PATH for writing (truncating it) and writes the header. options
 * may be NULL for the defaults. Allocates everything the callback path
 * will need and starts the writer thread. Returns NULL with err filled. */
struct ht_recorder *ht_recorder_open(const char *path,
				     const struct ht_header *header,
				     const struct ht_record_options *options,
				     struct ht_error *err);

/* Same, on an open file descriptor, which the recorder then owns (it is
 * closed on failure too). NAME is for messages. */
struct ht_recorder *ht_recorder_open_fd(int fd, const char *name,
					const struct ht_header *header,
					const struct ht_record_options *options,
					struct ht_error *err);

/* Flushes every thread's buffer, waits for the writer, writes the index
 * of dumps and GCs, and closes. Must not be called while other threads
 * still record. Returns HT_OK, or the first error the recording met (err
 * filled) — the file then holds every chunk written before it. */
enum ht_error_code ht_recorder_close(struct ht_recorder *rec,
				     struct ht_error *err);

/* Waits until every buffer handed to the writer so far is on disk (not
 * fsync'ed). Not for the callback path. */
enum ht_error_code ht_recorder_sync(struct ht_recorder *rec);

/* Hands the events the calling thread recorded so far to the writer now
 * (they would wait for its buffer to fill, or for a dump or GC to begin or
 * end): a thread that records beside a dump (names) gets them into the
 * file before the dump ends. May be called from the callback path; each
 * call costs a chunk of its own. */
enum ht_error_code ht_recorder_hand_off(struct ht_recorder *rec);

/* The first error the recording met, HT_OK if none. */
enum ht_error_code ht_recorder_error(const struct ht_recorder *rec,
				     struct ht_error *err);

struct ht_record_stats {
	uint64_t events;
	uint64_t dumps;
	uint64_t gcs;
	uint64_t chunks_written;
	uint64_t bytes_written;      /* file size so far */
	uint64_t bytes_uncompressed; /* encoded event bytes handed to the writer */
	uint64_t waits;              /* times a caller waited for a free buffer */
	uint64_t dropped_events;     /* not recorded: no thread slot left */
	uint64_t violations[HT_V_COUNT_];
};
void ht_recorder_stats(const struct ht_recorder *rec, struct ht_record_stats *st);

/* ---- One function per event (libheaptrace(3)) -------------------------- */

enum ht_error_code ht_class(struct ht_recorder *rec, ht_id id,
			    const char *name, bool has_size, uint64_t size);
enum ht_error_code ht_thread(struct ht_recorder *rec, ht_id id,
			     const char *name);
enum ht_error_code ht_method(struct ht_recorder *rec, ht_id id,
			     const char *name);
enum ht_error_code ht_object_allocated(struct ht_recorder *rec, ht_id id,
				       ht_id class_id, uint64_t size);
/* Version 4, allocation sites. A method with its source file (NULL: not
 * known) and line (0: not known); a stack of methods, innermost first,
 * declared once before an allocation names it; an allocation with the
 * stack that made it (0: none). The header's metadata `sites` says how
 * allocations were chosen to carry a stack: "all", or the mean sampling
 * interval in bytes (heaptrace(5), "Allocation sites"). */
enum ht_error_code ht_method_at(struct ht_recorder *rec, ht_id id,
				const char *name, const char *file,
				uint32_t line);
enum ht_error_code ht_stack(struct ht_recorder *rec, ht_id id, size_t count,
			    const ht_id *frames);
enum ht_error_code ht_object_allocated_by(struct ht_recorder *rec, ht_id id,
					  ht_id class_id, uint64_t size,
					  ht_id stack);
/* generations: bit set of the collected generations (bit g = generation g).
 * gc: the runtime's GC number, or -1 when it does not give one. */
enum ht_error_code ht_gc_started(struct ht_recorder *rec, int64_t gc,
				 uint32_t generations,
				 enum ht_gc_reason reason);
enum ht_error_code ht_generation_bounds(struct ht_recorder *rec, size_t count,
					const struct ht_generation_range *ranges);
/* Parallel arrays as MovedReferences passes them. */
enum ht_error_code ht_moved_references(struct ht_recorder *rec, size_t count,
				       const ht_id *old_starts,
				       const ht_id *new_starts,
				       const uint64_t *lengths);
enum ht_error_code ht_surviving_references(struct ht_recorder *rec,
					   size_t count, const ht_id *starts,
					   const uint64_t *lengths);
enum ht_error_code ht_gc_finished(struct ht_recorder *rec);
enum ht_error_code ht_begin_container(struct ht_recorder *rec,
				      enum ht_container_type type, ht_id id1,
				      ht_id id2);
/* kinds, root_flags and root_ids may be NULL. */
enum ht_error_code ht_root_references(struct ht_recorder *rec, size_t count,
				      const ht_id *refs, const uint32_t *flags,
				      const uint8_t *kinds,
				      const uint8_t *root_flags,
				      const ht_id *root_ids,
				      enum ht_result result);
/* ref_flags may be NULL; generation < 0 when the runtime does not say. */
enum ht_error_code ht_object_references(struct ht_recorder *rec, ht_id id,
					ht_id class_id, uint64_t size,
					uint32_t flags, size_t count,
					const ht_id *refs,
					const uint32_t *ref_flags,
					int generation, enum ht_result result);
/* Declares reference fields (struct ht_field), before the end of the dump
 * whose references name them. */
enum ht_error_code ht_fields(struct ht_recorder *rec, size_t count,
			     const struct ht_field *fields);
/* ht_object_references with the field each ref was read from (ref_fields
 * may be NULL; 0 = no field). */
enum ht_error_code ht_object_references_fields(struct ht_recorder *rec,
					       ht_id id, ht_id class_id,
					       uint64_t size, uint32_t flags,
					       size_t count, const ht_id *refs,
					       const uint32_t *ref_flags,
					       const ht_id *ref_fields,
					       int generation,
					       enum ht_result result);
/* ht_root_references with the static field each root is (root_fields may
 * be NULL; 0 = none). */
enum ht_error_code ht_root_references_fields(struct ht_recorder *rec,
					     size_t count, const ht_id *refs,
					     const uint32_t *flags,
					     const uint8_t *kinds,
					     const uint8_t *root_flags,
					     const ht_id *root_ids,
					     const ht_id *root_fields,
					     enum ht_result result);

/* Records any event given as a struct (used by `heaptrace convert`). A
 * time given in it (has_time) is recorded as it is: only on gc_started,
 * gc_finished and begin_container, only in a version 3 trace
 * (HT_E_INVALID otherwise). */
enum ht_error_code ht_record_event(struct ht_recorder *rec,
				   const struct ht_event *ev);

#ifdef __cplusplus
}
#endif
#endif
