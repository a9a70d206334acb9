/*
 * writer_internal.h - what the pieces of the recording shim share: the
 * recorder, its buffers and thread slots, the limits fixed at open, and the
 * few helpers more than one piece calls. writer.c is the callback path,
 * writer_thread.c the thread that compresses and writes the chunks,
 * writer_open.c opening and closing a recorder (writer.c says why the shim
 * is shaped as it is).
 *
 * This header is not an API; it may change from one release to the next.
 * The helpers are static inline: the callback path calls some of them on
 * every event, and a name of the shim's static library must not be
 * generic (only ht_* is exported, libheaptrace.map).
 */
#ifndef HT_WRITER_INTERNAL_H
#define HT_WRITER_INTERNAL_H

#include <heaptrace/record.h>

#include "lib/common/codec.h"
#include "lib/common/error.h"
#include "lib/common/format.h"
#include "lib/common/protocol.h"
#include "lib/common/varint.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* next_in is const: the writer never changes what it compresses */
#define ZLIB_CONST
#include <zlib.h>

#define DEFAULT_BUFFER_SIZE (1u << 20)
/* An event with a string of CODEC_MAX_STRING bytes must fit one buffer:
 * only array events are split. */
#define MIN_BUFFER_SIZE (128u << 10)
/* Far below the readers' chunk limit even when the data does not compress. */
#define MAX_BUFFER_SIZE (64u << 20)
#define DEFAULT_BUFFERS 32u
#define MAX_BUFFERS 65535u /* buffer indexes fit the free list's 32 bits */
#define DEFAULT_LEVEL 1
#define DEFAULT_MAX_THREADS 256u
#define MAX_THREADS_LIMIT 65536u
/* Arrays larger than this cannot exist in memory next to their bound. */
#define MAX_ELEMENTS (SIZE_MAX / 64)

/* How long a barrier waits for threads that are in the middle of an event
 * (all of them together): a running thread finishes one in well under a
 * microsecond, a thread the runtime suspended there never will, and the
 * barrier must not hang on it. Close waits longer: threads should have
 * stopped recording by then. */
#define BARRIER_PATIENCE_NS (50 * 1000u)
#define CLOSE_PATIENCE_NS (1000 * 1000 * 1000u)

_Static_assert(sizeof(struct proto_state) == sizeof(uint64_t),
	       "the protocol state is swapped as one 64-bit word");

/*
 * One buffer of the pool. It becomes exactly one chunk, so the descriptor
 * carries what the chunk header and the index need. A buffer is in exactly
 * one place at a time: the free list, a thread's slot, the full stack, or
 * the writer's hands; whoever holds it may touch its plain fields.
 */
struct wbuf {
	uint8_t *data;
	size_t used;     /* encoded bytes, set when handed to the writer */
	uint32_t events;
	/* HT_INDEX_DUMP or HT_INDEX_GC when the buffer's last event begins a
	 * dump or a GC (a start barrier hands its buffer off right after the
	 * event, so there is at most one), else 0. */
	uint8_t starts;
	/* Free list link: index + 1 of the next free buffer, 0 for none.
	 * Atomic because a popper may read it while another thread pops the
	 * same buffer; the tag on the head makes the stale read harmless. */
	_Atomic uint32_t next_free;
	struct wbuf *next_full; /* full stack link */
};

/*
 * A recording thread's place: its current buffer and the encoder into it.
 * The state word lets another thread (a barrier, close, a thread short of
 * buffers) take the buffer without a lock: the owner holds BUSY around
 * each event, a thief holds STOLEN while it hands the buffer off, and
 * either only ever switches from IDLE, so they never touch the buffer at
 * the same time. One slot per cache line: the owner writes it on every
 * event and other threads only look at it at barriers.
 */
enum { SLOT_IDLE, SLOT_BUSY, SLOT_STOLEN };

struct slot {
	_Alignas(64) _Atomic uint32_t state;
	_Atomic uint32_t owned;   /* 1 while a thread has the slot */
	_Atomic(struct wbuf *) buf; /* NULL when empty */
	struct codec_enc enc;     /* valid while buf is set */
	/* events this slot ever encoded: written by the owner only, summed by
	 * ht_recorder_stats; never reset, so the sum never goes back */
	_Atomic uint64_t events;
	struct ht_recorder *rec;  /* for the thread-exit destructor */
};

/* A dump or GC start: the chunk it is in and its index in the trace. */
struct index_entry {
	uint64_t event;
	uint64_t offset;
	uint8_t kind;
};

/* This struct is not an API; it may change from one release to the next. */
struct ht_recorder {
	/* ---- fixed at open ---- */
	uint64_t serial; /* tells this recorder's thread slots from earlier ones */
	int fd;
	char *name;
	size_t buffer_size;
	unsigned n_buffers;
	unsigned n_slots;
	int level;
	uint32_t version; /* of the trace written: 1 carries no fields, 2 no
			     times */
	bool stamp_times; /* ht_record_options.times, version 3 only */
	uint64_t start_ns; /* CLOCK_MONOTONIC at open: the trace's time 0 */
	pthread_key_t key;
	bool key_created;
	bool use_key; /* pthread_setspecific allocates nothing for this key */
	struct slot *slots;
	struct wbuf *bufs;
	uint8_t *pool;
	size_t pool_len;

	/*
	 * Free buffers: a stack of buffer indexes whose head holds a tag
	 * bumped on every change (high 32 bits) next to index + 1 of the top
	 * (low 32 bits), so a pop whose head was popped and pushed back in
	 * between fails its CAS (ABA). free_sem counts the free buffers, so a
	 * taker that got past it always finds one and a taker that did not
	 * sleeps in the kernel, not in a spin.
	 */
	_Alignas(64) _Atomic uint64_t free_head;
	sem_t free_sem;

	/*
	 * Buffers for the writer: a Treiber stack (push by CAS), which the
	 * writer empties at once with an exchange and reverses into push
	 * order. The order of successful pushes is the order of the trace.
	 * work_sem is posted once a push (and by sync and close).
	 */
	_Alignas(64) _Atomic(struct wbuf *) full_head;
	sem_t work_sem;

	/* ---- counters of the callback path ---- */
	_Alignas(64) _Atomic uint64_t proto; /* struct proto_state */
	_Atomic uint64_t violations[HT_V_COUNT_];
	_Atomic uint64_t dumps, gcs, dropped, waits, bytes_uncompressed;

	/* ---- writer thread ---- */
	_Alignas(64) _Atomic bool stop;
	/* batches the writer has taken off the full stack / finished */
	_Atomic uint64_t batches_taken, batches_done;
	_Atomic uint64_t chunks_written, bytes_written;
	pthread_t thread;
	bool thread_started;
	/* the rest is the writer's alone while it runs */
	z_stream z;
	bool z_ready;
	uint8_t *out; /* chunk header + compressed payload */
	size_t out_cap;
	uint64_t offset;     /* where the next chunk goes */
	uint64_t next_event; /* index of the next chunk's first event */
	struct index_entry *index; /* mmap'ed, grown with mremap */
	size_t index_len, index_cap;
	bool index_lost;
	uint64_t index_dumps, index_gcs;

	/* The first error: failed is 0 or its enum ht_error_code, set last
	 * (release) so the fields are complete when it reads non-zero. */
	_Atomic int failed;
	int fail_errno;
	uint64_t fail_offset;
	const char *fail_what;
};

/* Records the first error; later ones are consequences. */
static inline void fail(struct ht_recorder *rec, enum ht_error_code code,
			int errnum, uint64_t offset, const char *what)
{
	int none = 0;

	if (atomic_load_explicit(&rec->failed, memory_order_acquire))
		return;
	rec->fail_errno = errnum;
	rec->fail_offset = offset;
	rec->fail_what = what;
	atomic_compare_exchange_strong_explicit(&rec->failed, &none, (int)code,
						memory_order_release,
						memory_order_relaxed);
}

static inline bool failed(const struct ht_recorder *rec)
{
	return atomic_load_explicit(&rec->failed, memory_order_relaxed) != 0;
}

/* write(2) until done: 0, or the errno; *done says how far it got. */
static inline int write_all(int fd, const uint8_t *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t w = write(fd, p + *done, n - *done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		*done += (size_t)w;
	}
	return 0;
}

/* CLOCK_MONOTONIC in nanoseconds: through the vDSO, no lock, no
 * allocation, safe in a stop-the-world pause. 0 if the clock fails. */
static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The free list of buffers (writer.c, the buffer pool). */
#define FREE_TOP(head) ((uint32_t)(head))
#define FREE_TAG(head) ((head) >> 32)
#define FREE_HEAD(tag, top) ((uint64_t)(tag) << 32 | (uint32_t)(top))

static inline void pool_push(struct ht_recorder *rec, struct wbuf *b)
{
	uint32_t idx = (uint32_t)(b - rec->bufs) + 1;
	uint64_t head = atomic_load_explicit(&rec->free_head,
					     memory_order_relaxed);

	b->used = 0;
	b->events = 0;
	b->starts = 0;
	do {
		atomic_store_explicit(&b->next_free, FREE_TOP(head),
				      memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(
		&rec->free_head, &head, FREE_HEAD(FREE_TAG(head) + 1, idx),
		memory_order_release, memory_order_relaxed));
}

static inline void pool_put(struct ht_recorder *rec, struct wbuf *b)
{
	pool_push(rec, b);
	sem_post(&rec->free_sem);
}

/* writer.c */
void writer_steal_others(struct ht_recorder *rec, struct slot *self,
		  uint64_t patience_ns);
void writer_slot_release_at_exit(void *arg);

/* writer_thread.c */
void *writer_main(void *arg);

#endif
