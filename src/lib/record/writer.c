/*
 * writer.c - the recording shim of record.h: ht_<event> encodes each event
 * into a buffer owned by the calling thread; full buffers go to a writer
 * thread that compresses each into one chunk (format.h) and writes it.
 *
 * The callback path may run inside a stop-the-world pause where suspended
 * threads hold the C library's locks (malloc's, stdio's). So it calls no
 * malloc and no stdio and takes no lock: it uses atomics, its own buffer,
 * and POSIX semaphores (futex based, no libc lock) to wait for a free
 * buffer. The writer thread allocates nothing in steady state either: a
 * producer may be waiting on it for a buffer while a suspended thread
 * holds malloc's lock. Everything is allocated at open; the index of dumps
 * and GCs grows with mremap.
 *
 * The order of the trace is the order in which buffers are pushed on the
 * full stack. Within a thread, events keep their order. Across threads,
 * the group events are barriers: gc_started and C_BEGIN first hand every
 * other thread's buffer to the writer, then go out in a buffer of their
 * own, so that what any thread records later lands after them; gc_finished
 * and C_END hand every thread's buffer off before themselves, which also
 * flushes each dump and GC to the file as it ends.
 */
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

/* Distinguishes recorders opened one after another in a process. */
static _Atomic uint64_t last_serial;

/*
 * The calling thread's slot in the recorder it used last. Initial-exec:
 * global-dynamic TLS in a dlopen'ed library may malloc on first access,
 * which the callback path must not do.
 */
struct thread_slot {
	uint64_t serial;
	struct slot *slot;
};
static __thread struct thread_slot this_thread
	__attribute__((tls_model("initial-exec")));

/* ---- small helpers ------------------------------------------------------- */

/* Spins politely; after a while gives the CPU to whoever we wait for. */
static void cpu_relax(unsigned round)
{
	if (round >= 64) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static void sem_wait_nointr(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* Records the first error; later ones are consequences. */
static void fail(struct ht_recorder *rec, enum ht_error_code code, int errnum,
		 uint64_t offset, const char *what)
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

static bool failed(const struct ht_recorder *rec)
{
	return atomic_load_explicit(&rec->failed, memory_order_relaxed) != 0;
}

/* write(2) until done: 0, or the errno; *done says how far it got. */
static int write_all(int fd, const uint8_t *p, size_t n, size_t *done)
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

/* ---- the buffer pool ----------------------------------------------------- */

#define FREE_TOP(head) ((uint32_t)(head))
#define FREE_TAG(head) ((head) >> 32)
#define FREE_HEAD(tag, top) ((uint64_t)(tag) << 32 | (uint32_t)(top))

static void pool_push(struct ht_recorder *rec, struct wbuf *b)
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

/* Only after a successful wait on free_sem, so the stack holds one for us. */
static struct wbuf *pool_pop(struct ht_recorder *rec)
{
	uint64_t head = atomic_load_explicit(&rec->free_head,
					     memory_order_acquire);

	for (unsigned round = 0;; round++) {
		uint32_t top = FREE_TOP(head);
		uint32_t next;

		if (top == 0) {
			/* Cannot be: every post of free_sem follows its push.
			 * Waiting beats returning NULL to the callback path. */
			cpu_relax(round);
			head = atomic_load_explicit(&rec->free_head,
						    memory_order_acquire);
			continue;
		}
		next = atomic_load_explicit(&rec->bufs[top - 1].next_free,
					    memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			    &rec->free_head, &head,
			    FREE_HEAD(FREE_TAG(head) + 1, next),
			    memory_order_acquire, memory_order_acquire))
			return &rec->bufs[top - 1];
	}
}

static void pool_put(struct ht_recorder *rec, struct wbuf *b)
{
	pool_push(rec, b);
	sem_post(&rec->free_sem);
}

static void full_push(struct ht_recorder *rec, struct wbuf *b)
{
	struct wbuf *head = atomic_load_explicit(&rec->full_head,
						 memory_order_relaxed);

	atomic_fetch_add_explicit(&rec->bytes_uncompressed, b->used,
				  memory_order_relaxed);
	/* seq_cst, for ht_recorder_sync's reasoning */
	do {
		b->next_full = head;
	} while (!atomic_compare_exchange_weak_explicit(
		&rec->full_head, &head, b, memory_order_seq_cst,
		memory_order_relaxed));
	sem_post(&rec->work_sem);
}

/* ---- thread slots -------------------------------------------------------- */

static void slot_enter(struct slot *s)
{
	for (unsigned round = 0;; round++) {
		uint32_t idle = SLOT_IDLE;

		if (atomic_compare_exchange_weak_explicit(
			    &s->state, &idle, SLOT_BUSY, memory_order_acquire,
			    memory_order_relaxed))
			return;
		cpu_relax(round); /* a thief is handing our buffer off */
	}
}

static void slot_leave(struct slot *s)
{
	atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
}

/* Gives the slot's buffer to the writer (or back to the pool if empty).
 * The caller holds the slot (BUSY or STOLEN). */
static void slot_handoff(struct ht_recorder *rec, struct slot *s)
{
	struct wbuf *b = atomic_load_explicit(&s->buf, memory_order_relaxed);

	if (!b)
		return;
	atomic_store_explicit(&s->buf, NULL, memory_order_relaxed);
	if (b->events == 0) {
		pool_put(rec, b);
		return;
	}
	b->used = codec_enc_used(&s->enc);
	full_push(rec, b);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* a vDSO call: no lock, no system call */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Hands off another thread's buffer if that thread is not in the middle of
 * an event, waiting for it to finish one until *deadline (set on the first
 * wait of a steal pass, so that the whole pass waits patience_ns at most).
 */
static void slot_steal(struct ht_recorder *rec, struct slot *s,
		       uint64_t patience_ns, uint64_t *deadline)
{
	if (!atomic_load_explicit(&s->buf, memory_order_relaxed))
		return;
	for (unsigned round = 0;; round++) {
		uint32_t idle = SLOT_IDLE;

		if (atomic_compare_exchange_strong_explicit(
			    &s->state, &idle, SLOT_STOLEN, memory_order_acquire,
			    memory_order_relaxed))
			break;
		if (patience_ns == 0)
			return;
		if (*deadline == 0)
			*deadline = now_ns() + patience_ns;
		else if (round % 16 == 0 && now_ns() > *deadline)
			return;
		cpu_relax(round);
	}
	slot_handoff(rec, s);
	atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
}

/* self is the caller's slot, never taken; NULL for close. */
static void steal_others(struct ht_recorder *rec, struct slot *self,
			 uint64_t patience_ns)
{
	uint64_t deadline = 0;

	for (unsigned i = 0; i < rec->n_slots; i++)
		if (&rec->slots[i] != self)
			slot_steal(rec, &rec->slots[i], patience_ns, &deadline);
}

/* How often a thread waiting for a buffer looks again for buffers idling
 * in other threads' slots. */
#define STARVING_POLL_NS (1000 * 1000)

/* Waits on free_sem for at most STARVING_POLL_NS; true if it got one.
 * sem_timedwait is futex based like sem_wait, and clock_gettime is a
 * vDSO call: neither takes a lock. */
static bool sem_wait_a_while(sem_t *s)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += STARVING_POLL_NS;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	return sem_timedwait(s, &until) == 0;
}

/*
 * A free buffer, waiting for the writer if there is none. With more
 * threads than buffers, every buffer may sit half full in the slot of a
 * thread that records nothing more for a while (it waits for this one,
 * say): nothing would ever come back. So the waiter hands such buffers to
 * the writer, and does it again as long as it waits, since a thread that
 * was in the middle of an event at the first look may since have gone
 * idle with its buffer.
 */
static struct wbuf *buffer_get(struct ht_recorder *rec, struct slot *self)
{
	if (sem_trywait(&rec->free_sem) != 0) {
		atomic_fetch_add_explicit(&rec->waits, 1, memory_order_relaxed);
		do
			steal_others(rec, self, 0);
		while (!sem_wait_a_while(&rec->free_sem));
	}
	return pool_pop(rec);
}

static void slot_fresh_buffer(struct ht_recorder *rec, struct slot *s)
{
	struct wbuf *b = buffer_get(rec, s);

	codec_enc_init(&s->enc, b->data, rec->buffer_size);
	s->enc.class_refs = rec->version >= 3;
	atomic_store_explicit(&s->buf, b, memory_order_relaxed);
}

/* Runs at the exit of a thread that recorded: its events go to the writer
 * and its slot to the next thread. */
static void slot_release_at_exit(void *arg)
{
	struct slot *s = arg;

	slot_enter(s);
	slot_handoff(s->rec, s);
	slot_leave(s);
	if (this_thread.slot == s)
		this_thread.serial = 0;
	atomic_store_explicit(&s->owned, 0, memory_order_release);
}

static struct slot *slot_acquire(struct ht_recorder *rec)
{
	for (unsigned i = 0; i < rec->n_slots; i++) {
		struct slot *s = &rec->slots[i];
		uint32_t zero = 0;

		if (atomic_load_explicit(&s->owned, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(
			    &s->owned, &zero, 1, memory_order_acquire,
			    memory_order_relaxed))
			return s;
	}
	return NULL;
}

static struct slot *thread_slot_slow(struct ht_recorder *rec)
{
	struct slot *s = NULL;

	/* Back to a recorder this thread used before another one. */
	if (rec->use_key)
		s = pthread_getspecific(rec->key);
	if (!s) {
		s = slot_acquire(rec);
		if (!s)
			return NULL;
		if (rec->use_key)
			pthread_setspecific(rec->key, s);
	}
	this_thread.serial = rec->serial;
	this_thread.slot = s;
	return s;
}

static inline struct slot *thread_slot(struct ht_recorder *rec)
{
	if (this_thread.serial == rec->serial)
		return this_thread.slot;
	return thread_slot_slow(rec);
}

/* ---- what a call records ------------------------------------------------- */

/*
 * One call's event. MovedReferences and SurvivingReferences come as
 * parallel arrays: then `parallel` is set, the arrays below stand for the
 * event's blocks, and ev carries the type and count only.
 */
struct request {
	struct ht_event ev;
	bool parallel;
	const ht_id *starts;     /* old starts, or surviving starts */
	const ht_id *new_starts;
	const uint64_t *lengths;
};

static size_t request_count(const struct request *rq)
{
	return codec_event_count(&rq->ev);
}

#define SLICE(p, from) ((p) ? (p) + (from) : NULL)

/* Elements [from, from + n) of rq as an event of their own. Pieces of an
 * object but the last announce more references to come: the protocol's
 * own continuation rule, so a reader rejoins them as any split object. */
static void request_slice(const struct request *rq, size_t from, size_t n,
			  bool last, struct request *out)
{
	*out = *rq;
	switch (rq->ev.type) {
	case HT_EV_GENERATION_BOUNDS: {
		struct ht_ev_generation_bounds *g = &out->ev.u.generation_bounds;

		g->ranges = SLICE(g->ranges, from);
		g->count = n;
		break;
	}
	case HT_EV_MOVED_REFERENCES: {
		struct ht_ev_moved_references *m = &out->ev.u.moved_references;

		m->blocks = SLICE(m->blocks, from);
		m->count = n;
		out->starts = SLICE(rq->starts, from);
		out->new_starts = SLICE(rq->new_starts, from);
		out->lengths = SLICE(rq->lengths, from);
		break;
	}
	case HT_EV_SURVIVING_REFERENCES: {
		struct ht_ev_surviving_references *v =
			&out->ev.u.surviving_references;

		v->blocks = SLICE(v->blocks, from);
		v->count = n;
		out->starts = SLICE(rq->starts, from);
		out->lengths = SLICE(rq->lengths, from);
		break;
	}
	case HT_EV_ROOT_REFERENCES: {
		struct ht_ev_root_references *r = &out->ev.u.root_references;

		r->refs = SLICE(r->refs, from);
		r->flags = SLICE(r->flags, from);
		r->kinds = SLICE(r->kinds, from);
		r->root_flags = SLICE(r->root_flags, from);
		r->root_ids = SLICE(r->root_ids, from);
		r->root_fields = SLICE(r->root_fields, from);
		r->count = n;
		break;
	}
	case HT_EV_OBJECT_REFERENCES: {
		struct ht_ev_object_references *o = &out->ev.u.object_references;

		o->refs = SLICE(o->refs, from);
		o->ref_flags = SLICE(o->ref_flags, from);
		o->ref_fields = SLICE(o->ref_fields, from);
		o->count = n;
		if (!last) {
			o->flags |= HT_OBJ_MORE_REFERENCES;
			o->n_values = 0;
			o->value_fields = NULL;
			o->values = NULL;
			o->array = NULL;
		}
		break;
	}
	case HT_EV_FIELDS:
		out->ev.u.fields.fields = SLICE(rq->ev.u.fields.fields, from);
		out->ev.u.fields.count = n;
		break;
	default:
		break;
	}
}

/* Encodes rq into the slot's buffer, which has codec_event_bound room. */
static void put_request(struct slot *s, const struct request *rq)
{
	struct wbuf *b = atomic_load_explicit(&s->buf, memory_order_relaxed);

	if (rq->parallel && rq->ev.type == HT_EV_MOVED_REFERENCES)
		codec_put_moved(&s->enc, rq->ev.u.moved_references.count,
				rq->starts, rq->new_starts, rq->lengths);
	else if (rq->parallel)
		codec_put_surviving(&s->enc, rq->ev.u.surviving_references.count,
				    rq->starts, rq->lengths);
	else
		codec_put_event(&s->enc, &rq->ev);
	b->events++;
	atomic_store_explicit(&s->events,
			      atomic_load_explicit(&s->events,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static size_t slot_room(const struct slot *s)
{
	if (!atomic_load_explicit(&s->buf, memory_order_relaxed))
		return 0;
	return codec_enc_room(&s->enc);
}

/* An event larger than a whole buffer goes out as consecutive events of
 * the same type, each filling what is left of a buffer. */
static void encode_split(struct ht_recorder *rec, struct slot *s,
			 const struct request *rq)
{
	size_t elem = codec_element_bound(&rq->ev);
	size_t count = request_count(rq);
	/* every part keeps room for the values, which go in the last */
	size_t fixed = CODEC_EVENT_OVERHEAD + codec_values_bound(&rq->ev);
	size_t done = 0;

	while (done < count) {
		size_t room = slot_room(s);
		size_t n = room > fixed ? (room - fixed) / elem : 0;
		struct request piece;

		if (n == 0) {
			slot_handoff(rec, s);
			slot_fresh_buffer(rec, s);
			continue;
		}
		if (n > count - done)
			n = count - done;
		request_slice(rq, done, n, done + n == count, &piece);
		put_request(s, &piece);
		done += n;
	}
}

static void encode(struct ht_recorder *rec, struct slot *s,
		   const struct request *rq)
{
	size_t bound = codec_event_bound(&rq->ev);

	if (bound <= slot_room(s)) {
		put_request(s, rq);
		return;
	}
	if (bound > rec->buffer_size) {
		encode_split(rec, s, rq);
		return;
	}
	slot_handoff(rec, s);
	slot_fresh_buffer(rec, s);
	put_request(s, rq);
}

/* Steps the shared protocol state; a violation is counted, the event is
 * recorded all the same. No CAS when the state does not change, which is
 * the case for nearly every event of a dump. */
static void check_protocol(struct ht_recorder *rec, const struct request *rq)
{
	struct ht_event moved_view;
	const struct ht_event *ev = &rq->ev;
	uint64_t old = atomic_load_explicit(&rec->proto, memory_order_relaxed);
	uint64_t next;
	enum ht_violation_code code;

	if (rq->parallel) {
		/* The blocks are not in ev: show the protocol none. */
		moved_view = rq->ev;
		moved_view.u.moved_references.count = 0;
		moved_view.u.surviving_references.count = 0;
		ev = &moved_view;
	}
	do {
		struct proto_state st;
		unsigned effects;

		memcpy(&st, &old, sizeof(st));
		code = proto_step(&st, ev, &effects);
		memcpy(&next, &st, sizeof(next));
		if (next == old)
			break;
	} while (!atomic_compare_exchange_weak_explicit(
		&rec->proto, &old, next, memory_order_relaxed,
		memory_order_relaxed));
	if (code != HT_V_NONE && (unsigned)code < HT_V_COUNT_)
		atomic_fetch_add_explicit(&rec->violations[code], 1,
					  memory_order_relaxed);
}

enum barrier { NO_BARRIER, START_BARRIER, END_BARRIER };

/* *starts: the index kind when ev begins a dump or a GC. */
static enum barrier barrier_of(const struct ht_event *ev, uint8_t *starts)
{
	*starts = 0;
	switch (ev->type) {
	case HT_EV_GC_STARTED:
		*starts = HT_INDEX_GC;
		return START_BARRIER;
	case HT_EV_GC_FINISHED:
		return END_BARRIER;
	case HT_EV_BEGIN_CONTAINER:
		if (ev->u.begin_container.type == HT_C_BEGIN) {
			*starts = HT_INDEX_DUMP;
			return START_BARRIER;
		}
		if (ev->u.begin_container.type == HT_C_END)
			return END_BARRIER;
		return NO_BARRIER;
	default:
		return NO_BARRIER;
	}
}

/*
 * The callback path. A barrier first hands off every other thread's
 * buffer (those in the middle of an event keep theirs: their event is
 * concurrent with this one, and their order is kept within the thread),
 * then records its event and hands its own buffer off.
 */
static enum ht_error_code record(struct ht_recorder *rec,
				 const struct request *rq)
{
	struct slot *s;
	enum barrier barrier;
	uint8_t starts;

	if (failed(rec))
		return HT_E_STATE;
	s = thread_slot(rec);
	if (!s) {
		atomic_fetch_add_explicit(&rec->dropped, 1, memory_order_relaxed);
		return HT_E_LIMIT;
	}
	barrier = barrier_of(&rq->ev, &starts);
	slot_enter(s);
	check_protocol(rec, rq);
	if (barrier != NO_BARRIER)
		steal_others(rec, s, BARRIER_PATIENCE_NS);
	encode(rec, s, rq);
	if (starts) {
		atomic_load_explicit(&s->buf, memory_order_relaxed)->starts =
			starts;
		atomic_fetch_add_explicit(starts == HT_INDEX_DUMP ?
						  &rec->dumps : &rec->gcs,
					  1, memory_order_relaxed);
	}
	if (barrier != NO_BARRIER)
		slot_handoff(rec, s);
	slot_leave(s);
	return HT_OK;
}

/* ---- argument checks ----------------------------------------------------- */

static bool array_ok(size_t count, const void *array)
{
	return count == 0 || array != NULL;
}

static bool result_ok(enum ht_result r)
{
	return (unsigned)r <= HT_RESULT_ABORT;
}

/* A field needs its id (0 means "no field" in a reference) and a kind
 * that exists; a name longer than the codec keeps is cut, as a class's. */
static bool fields_ok(size_t count, const struct ht_field *fields)
{
	for (size_t i = 0; i < count; i++) {
		const struct ht_field *f = &fields[i];
		bool primitive = ht_value_type_width(f->type) > 0;

		if (f->id == 0 || f->kind > HT_FIELD_KIND_LAST)
			return false;
		/* a type that exists; a primitive holds no referent */
		if (f->type && !primitive && f->type != HT_TYPE_OBJECT)
			return false;
		if (primitive && f->kind > HT_FIELD_STATIC)
			return false;
	}
	return true;
}

/* Values name nonzero fields; an array's prefix is no longer than it,
 * and its bytes are given when it has any. */
static bool values_ok(const struct ht_ev_object_references *o)
{
	const struct ht_array_values *a = o->array;

	if (o->n_values && (!o->value_fields || !o->values))
		return false;
	for (size_t i = 0; i < o->n_values; i++)
		if (o->value_fields[i] == 0)
			return false;
	if (!a)
		return true;
	return ht_value_type_width(a->type) > 0 && a->stored <= a->length &&
	       (a->stored == 0 || a->data != NULL);
}

/* HT_OK, HT_E_INVALID or HT_E_LIMIT: refused calls record nothing. The
 * parallel arrays of a request were checked by the function that took them. */
static enum ht_error_code check_request(const struct request *rq)
{
	const struct ht_event *ev = &rq->ev;
	size_t count = 0;
	bool ok = true;

	switch (ev->type) {
	case HT_EV_CLASS:
	case HT_EV_THREAD:
	case HT_EV_METHOD:
	case HT_EV_OBJECT_ALLOCATED:
	case HT_EV_GC_FINISHED:
		break;
	case HT_EV_GC_STARTED:
		ok = (unsigned)ev->u.gc_started.reason <= HT_GC_INDUCED;
		break;
	case HT_EV_GENERATION_BOUNDS:
		count = ev->u.generation_bounds.count;
		ok = array_ok(count, ev->u.generation_bounds.ranges);
		break;
	case HT_EV_MOVED_REFERENCES:
		count = ev->u.moved_references.count;
		ok = rq->parallel ||
		     array_ok(count, ev->u.moved_references.blocks);
		break;
	case HT_EV_SURVIVING_REFERENCES:
		count = ev->u.surviving_references.count;
		ok = rq->parallel ||
		     array_ok(count, ev->u.surviving_references.blocks);
		break;
	case HT_EV_BEGIN_CONTAINER:
		ok = ev->u.begin_container.type >= HT_C_FIRST &&
		     ev->u.begin_container.type <= HT_C_LAST;
		break;
	case HT_EV_ROOT_REFERENCES: {
		const struct ht_ev_root_references *r = &ev->u.root_references;

		count = r->count;
		ok = array_ok(count, r->refs) && array_ok(count, r->flags) &&
		     result_ok(r->result);
		break;
	}
	case HT_EV_OBJECT_REFERENCES: {
		const struct ht_ev_object_references *o =
			&ev->u.object_references;

		count = o->count;
		ok = array_ok(count, o->refs) && result_ok(o->result) &&
		     values_ok(o);
		break;
	}
	case HT_EV_FIELDS:
		count = ev->u.fields.count;
		ok = array_ok(count, ev->u.fields.fields) &&
		     fields_ok(count, ev->u.fields.fields);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return HT_E_INVALID;
	return count > MAX_ELEMENTS ? HT_E_LIMIT : HT_OK;
}

/* CLOCK_MONOTONIC in nanoseconds: through the vDSO, no lock, no
 * allocation, safe in a stop-the-world pause. 0 if the clock fails. */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The events the shim stamps itself: a GC's start and finish, a dump's
 * begin and end (not every container: they are many, and their times
 * say nothing an analysis uses). */
static bool stamped_event(const struct ht_event *ev)
{
	if (ev->type == HT_EV_BEGIN_CONTAINER)
		return ev->u.begin_container.type == HT_C_BEGIN ||
		       ev->u.begin_container.type == HT_C_END;
	return ev->type == HT_EV_GC_STARTED || ev->type == HT_EV_GC_FINISHED;
}

static void stamp_time(const struct ht_recorder *rec, struct ht_event *ev)
{
	uint64_t now = monotonic_ns();

	ev->has_time = true;
	ev->time = now > rec->start_ns ? now - rec->start_ns : 0;
}

/* What a version 1 trace cannot hold. */
static bool carries_fields(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_FIELDS:
		return true;
	case HT_EV_ROOT_REFERENCES:
		return ev->u.root_references.root_fields != NULL;
	case HT_EV_OBJECT_REFERENCES:
		return ev->u.object_references.ref_fields != NULL;
	default:
		return false;
	}
}

/* What a version 1 or 2 trace cannot hold either: a referent's strength
 * (the field kinds after static), values (a field's type, an object's
 * values or array contents). */
static bool carries_version3_fields(const struct ht_event *ev)
{
	if (ev->type == HT_EV_OBJECT_REFERENCES)
		return ev->u.object_references.n_values ||
		       ev->u.object_references.array;
	if (ev->type != HT_EV_FIELDS)
		return false;
	for (size_t i = 0; i < ev->u.fields.count; i++)
		if (ev->u.fields.fields[i].kind > HT_FIELD_STATIC ||
		    ev->u.fields.fields[i].type)
			return true;
	return false;
}

static enum ht_error_code record_checked(struct ht_recorder *rec,
					 struct request *rq)
{
	enum ht_error_code rc;

	if (!rec)
		return HT_E_INVALID;
	rc = check_request(rq);
	if (rc == HT_OK && rec->version < 2 && carries_fields(&rq->ev))
		rc = HT_E_INVALID;
	if (rc == HT_OK && rec->version < 3 && carries_version3_fields(&rq->ev))
		rc = HT_E_INVALID;
	/* values stay whole in one part of a split object: a buffer must
	 * hold them with room for references to spare */
	if (rc == HT_OK && codec_values_bound(&rq->ev) > rec->buffer_size / 2)
		rc = HT_E_LIMIT;
	/* a time only where the format has one: version 3, timed events */
	if (rc == HT_OK && rq->ev.has_time &&
	    (rec->version < 3 || !ht_event_timed_type(rq->ev.type)))
		rc = HT_E_INVALID;
	if (rc != HT_OK)
		return rc;
	if (rec->stamp_times && !rq->ev.has_time && stamped_event(&rq->ev))
		stamp_time(rec, &rq->ev);
	return record(rec, rq);
}

/* ---- one function per event ---------------------------------------------- */

enum ht_error_code ht_record_event(struct ht_recorder *rec,
				   const struct ht_event *ev)
{
	struct request rq = { 0 };

	if (!ev)
		return HT_E_INVALID;
	rq.ev = *ev;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_class(struct ht_recorder *rec, ht_id id,
			    const char *name, bool has_size, uint64_t size)
{
	struct request rq = { .ev.type = HT_EV_CLASS };

	rq.ev.u.class_.id = id;
	rq.ev.u.class_.name = name;
	rq.ev.u.class_.has_size = has_size;
	rq.ev.u.class_.size = has_size ? size : 0;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_thread(struct ht_recorder *rec, ht_id id,
			     const char *name)
{
	struct request rq = { .ev.type = HT_EV_THREAD };

	rq.ev.u.thread.id = id;
	rq.ev.u.thread.name = name;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_method(struct ht_recorder *rec, ht_id id,
			     const char *name)
{
	struct request rq = { .ev.type = HT_EV_METHOD };

	rq.ev.u.method.id = id;
	rq.ev.u.method.name = name;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_object_allocated(struct ht_recorder *rec, ht_id id,
				       ht_id class_id, uint64_t size)
{
	struct request rq = { .ev.type = HT_EV_OBJECT_ALLOCATED };

	rq.ev.u.object_allocated.id = id;
	rq.ev.u.object_allocated.class_id = class_id;
	rq.ev.u.object_allocated.size = size;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_gc_started(struct ht_recorder *rec, int64_t gc,
				 uint32_t generations,
				 enum ht_gc_reason reason)
{
	struct request rq = { .ev.type = HT_EV_GC_STARTED };

	rq.ev.u.gc_started.has_gc = gc >= 0;
	rq.ev.u.gc_started.gc = gc >= 0 ? (uint64_t)gc : 0;
	rq.ev.u.gc_started.generations = generations;
	rq.ev.u.gc_started.reason = reason;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_generation_bounds(struct ht_recorder *rec, size_t count,
					const struct ht_generation_range *ranges)
{
	struct request rq = { .ev.type = HT_EV_GENERATION_BOUNDS };

	rq.ev.u.generation_bounds.count = count;
	rq.ev.u.generation_bounds.ranges = ranges;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_moved_references(struct ht_recorder *rec, size_t count,
				       const ht_id *old_starts,
				       const ht_id *new_starts,
				       const uint64_t *lengths)
{
	struct request rq = { .ev.type = HT_EV_MOVED_REFERENCES };

	if (!array_ok(count, old_starts) || !array_ok(count, new_starts) ||
	    !array_ok(count, lengths))
		return HT_E_INVALID;
	rq.ev.u.moved_references.count = count;
	rq.parallel = true;
	rq.starts = old_starts;
	rq.new_starts = new_starts;
	rq.lengths = lengths;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_surviving_references(struct ht_recorder *rec,
					   size_t count, const ht_id *starts,
					   const uint64_t *lengths)
{
	struct request rq = { .ev.type = HT_EV_SURVIVING_REFERENCES };

	if (!array_ok(count, starts) || !array_ok(count, lengths))
		return HT_E_INVALID;
	rq.ev.u.surviving_references.count = count;
	rq.parallel = true;
	rq.starts = starts;
	rq.lengths = lengths;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_gc_finished(struct ht_recorder *rec)
{
	struct request rq = { .ev.type = HT_EV_GC_FINISHED };

	return record_checked(rec, &rq);
}

enum ht_error_code ht_begin_container(struct ht_recorder *rec,
				      enum ht_container_type type, ht_id id1,
				      ht_id id2)
{
	struct request rq = { .ev.type = HT_EV_BEGIN_CONTAINER };

	rq.ev.u.begin_container.type = type;
	rq.ev.u.begin_container.id1 = id1;
	rq.ev.u.begin_container.id2 = id2;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_fields(struct ht_recorder *rec, size_t count,
			     const struct ht_field *fields)
{
	struct request rq = { .ev.type = HT_EV_FIELDS };

	rq.ev.u.fields.count = count;
	rq.ev.u.fields.fields = fields;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_root_references(struct ht_recorder *rec, size_t count,
				      const ht_id *refs, const uint32_t *flags,
				      const uint8_t *kinds,
				      const uint8_t *root_flags,
				      const ht_id *root_ids,
				      enum ht_result result)
{
	return ht_root_references_fields(rec, count, refs, flags, kinds,
					 root_flags, root_ids, NULL, result);
}

enum ht_error_code ht_root_references_fields(struct ht_recorder *rec,
					     size_t count, const ht_id *refs,
					     const uint32_t *flags,
					     const uint8_t *kinds,
					     const uint8_t *root_flags,
					     const ht_id *root_ids,
					     const ht_id *root_fields,
					     enum ht_result result)
{
	struct request rq = { .ev.type = HT_EV_ROOT_REFERENCES };
	struct ht_ev_root_references *r = &rq.ev.u.root_references;

	r->count = count;
	r->refs = refs;
	r->flags = flags;
	r->kinds = kinds;
	r->root_flags = root_flags;
	r->root_ids = root_ids;
	r->root_fields = root_fields;
	r->result = result;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_object_references(struct ht_recorder *rec, ht_id id,
					ht_id class_id, uint64_t size,
					uint32_t flags, size_t count,
					const ht_id *refs,
					const uint32_t *ref_flags,
					int generation, enum ht_result result)
{
	return ht_object_references_fields(rec, id, class_id, size, flags,
					   count, refs, ref_flags, NULL,
					   generation, result);
}

enum ht_error_code ht_object_references_fields(struct ht_recorder *rec,
					       ht_id id, ht_id class_id,
					       uint64_t size, uint32_t flags,
					       size_t count, const ht_id *refs,
					       const uint32_t *ref_flags,
					       const ht_id *ref_fields,
					       int generation,
					       enum ht_result result)
{
	struct request rq = { .ev.type = HT_EV_OBJECT_REFERENCES };
	struct ht_ev_object_references *o = &rq.ev.u.object_references;

	o->id = id;
	o->class_id = class_id;
	o->size = size;
	o->flags = flags;
	o->count = count;
	o->refs = refs;
	o->ref_flags = ref_flags;
	o->ref_fields = ref_fields;
	o->has_generation = generation >= 0;
	o->generation = generation >= 0 ? (uint32_t)generation : 0;
	o->result = result;
	return record_checked(rec, &rq);
}

/* ---- the writer thread --------------------------------------------------- */

/* Deflates in into out; the stored length, 0 on failure (a finished zlib
 * stream is never empty). deflateReset keeps the state allocated at open. */
static size_t compress_payload(struct ht_recorder *rec, const uint8_t *in,
			       size_t len, uint8_t *out, size_t cap)
{
	z_stream *z = &rec->z;

	if (deflateReset(z) != Z_OK)
		return 0;
	z->next_in = in;
	z->avail_in = (uInt)len;
	z->next_out = out;
	z->avail_out = (uInt)cap;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return 0;
	return (size_t)z->total_out;
}

/*
 * Writes one chunk at rec->offset. A write error (ENOSPC, EBADF, EIO, ...)
 * stops the recording. A file-size limit (RLIMIT_FSIZE) gives EFBIG only
 * where SIGXFSZ is ignored or blocked; elsewhere the kernel's default
 * action kills the process. The writer thread runs with every signal
 * blocked, so the writes it makes see EFBIG; the host's dispositions are
 * left alone.
 */
static bool write_chunk(struct ht_recorder *rec, uint8_t kind,
			const uint8_t *raw, size_t raw_len, uint32_t events,
			uint8_t *out, size_t out_cap)
{
	struct ht_chunk_header h = { 0 };
	size_t stored, done;
	int e;

	stored = compress_payload(rec, raw, raw_len, out + HT_CHUNK_HEADER_SIZE,
				  out_cap - HT_CHUNK_HEADER_SIZE);
	if (stored == 0) {
		fail(rec, HT_E_IO, 0, rec->offset, "cannot compress a chunk");
		return false;
	}
	h.kind = kind;
	h.compression = HT_COMPRESS_ZLIB;
	h.stored_length = (uint32_t)stored;
	h.raw_length = (uint32_t)raw_len;
	h.first_event = rec->next_event;
	h.events = events;
	h.payload_crc = (uint32_t)crc32(0, out + HT_CHUNK_HEADER_SIZE,
					(uInt)stored);
	chunk_header_put(out, &h);
	e = write_all(rec->fd, out, HT_CHUNK_HEADER_SIZE + stored, &done);
	if (e) {
		fail(rec, HT_E_IO, e, rec->offset + done, "cannot write");
		return false;
	}
	rec->offset += HT_CHUNK_HEADER_SIZE + stored;
	atomic_store_explicit(&rec->bytes_written, rec->offset,
			      memory_order_relaxed);
	return true;
}

/* Grows with mremap: the writer must not malloc while producers run. */
static void index_add(struct ht_recorder *rec, uint8_t kind, uint64_t event,
		      uint64_t offset)
{
	struct index_entry *e;

	if (rec->index_lost)
		return;
	if (rec->index_len == rec->index_cap) {
		size_t old = rec->index_cap * sizeof(*e);
		void *p = mremap(rec->index, old, 2 * old, MREMAP_MAYMOVE);

		if (p == MAP_FAILED) {
			rec->index_lost = true;
			return;
		}
		rec->index = p;
		rec->index_cap *= 2;
	}
	e = &rec->index[rec->index_len++];
	e->kind = kind;
	e->event = event;
	e->offset = offset;
	if (kind == HT_INDEX_DUMP)
		rec->index_dumps++;
	else
		rec->index_gcs++;
}

static void write_buffer(struct ht_recorder *rec, struct wbuf *b)
{
	uint64_t at = rec->offset;

	if (!write_chunk(rec, HT_CHUNK_EVENTS, b->data, b->used, b->events,
			 rec->out, rec->out_cap))
		return;
	if (b->starts)
		index_add(rec, b->starts, rec->next_event + b->events - 1, at);
	rec->next_event += b->events;
	atomic_fetch_add_explicit(&rec->chunks_written, 1, memory_order_relaxed);
}

/* The index payload of format.h, into a malloc'd buffer (producers have
 * stopped when it is built). */
static uint8_t *index_payload(struct ht_recorder *rec, size_t *len)
{
	size_t bound = VARINT_MAX * (3 * rec->index_len + 8 + 2 * HT_V_COUNT_);
	uint8_t *buf = malloc(bound), *p = buf;
	uint64_t prev_event = 0, prev_offset = 0, counts[HT_V_COUNT_];
	unsigned nonzero = 0;

	if (!buf)
		return NULL;
	p = varint_put(p, rec->index_len);
	for (size_t i = 0; i < rec->index_len; i++) {
		const struct index_entry *e = &rec->index[i];

		p = varint_put(p, e->kind);
		p = varint_put(p, e->event - prev_event);
		p = varint_put(p, e->offset - prev_offset);
		prev_event = e->event;
		prev_offset = e->offset;
	}
	p = varint_put(p, rec->next_event);
	p = varint_put(p, rec->index_dumps);
	p = varint_put(p, rec->index_gcs);
	p = varint_put(p, atomic_load(&rec->chunks_written));
	for (unsigned c = 0; c < HT_V_COUNT_; c++) {
		counts[c] = atomic_load(&rec->violations[c]);
		nonzero += counts[c] != 0;
	}
	p = varint_put(p, nonzero);
	for (unsigned c = 0; c < HT_V_COUNT_; c++) {
		if (!counts[c])
			continue;
		p = varint_put(p, c);
		p = varint_put(p, counts[c]);
	}
	p = varint_put(p, atomic_load(&rec->dropped));
	*len = (size_t)(p - buf);
	return buf;
}

/* The index chunk and the trailer that points at it. */
static void write_index(struct ht_recorder *rec)
{
	uint8_t trailer[HT_TRAILER_SIZE], *payload, *out;
	uint64_t at = rec->offset;
	size_t len, cap, done;
	int e;

	if (rec->index_lost) {
		fail(rec, HT_E_NOMEM, ENOMEM, at,
		     "no memory for the index of dumps and GCs: the file has none "
		     "(it still reads by scanning)");
		return;
	}
	payload = index_payload(rec, &len);
	if (!payload) {
		fail(rec, HT_E_NOMEM, ENOMEM, at, "cannot build the index");
		return;
	}
	cap = HT_CHUNK_HEADER_SIZE + deflateBound(&rec->z, (uLong)len);
	out = cap <= rec->out_cap ? rec->out : malloc(cap);
	if (!out) {
		free(payload);
		fail(rec, HT_E_NOMEM, ENOMEM, at, "cannot build the index");
		return;
	}
	if (write_chunk(rec, HT_CHUNK_INDEX, payload, len, 0, out, cap)) {
		put_le64(trailer, at);
		put_le32(trailer + 8, (uint32_t)crc32(0, trailer, 8));
		memcpy(trailer + 12, HT_TRAILER_MAGIC, 4);
		e = write_all(rec->fd, trailer, sizeof(trailer), &done);
		if (e)
			fail(rec, HT_E_IO, e, rec->offset + done,
			     "cannot write the trailer");
		else
			rec->offset += sizeof(trailer);
		atomic_store_explicit(&rec->bytes_written, rec->offset,
				      memory_order_relaxed);
	}
	if (out != rec->out)
		free(out);
	free(payload);
}

/* The full stack holds the newest push first. */
static struct wbuf *reverse(struct wbuf *b)
{
	struct wbuf *prev = NULL;

	while (b) {
		struct wbuf *next = b->next_full;

		b->next_full = prev;
		prev = b;
		b = next;
	}
	return prev;
}

/*
 * Takes everything pushed so far, writes it in push order, gives the
 * buffers back. After an error it only gives them back, so producers
 * never block on a dead writer. On stop, writes the index and leaves.
 * Batches are numbered so that sync can wait for one taken after its call.
 */
static void *writer_main(void *arg)
{
	struct ht_recorder *rec = arg;
	bool stop;

	do {
		struct wbuf *b;
		uint64_t batch;

		sem_wait_nointr(&rec->work_sem);
		stop = atomic_load(&rec->stop);
		batch = atomic_fetch_add(&rec->batches_taken, 1) + 1;
		b = reverse(atomic_exchange(&rec->full_head, NULL));
		while (b) {
			struct wbuf *next = b->next_full;

			if (!failed(rec))
				write_buffer(rec, b);
			pool_put(rec, b);
			b = next;
		}
		atomic_store(&rec->batches_done, batch);
	} while (!stop);
	if (!failed(rec))
		write_index(rec);
	return NULL;
}

/* ---- open and close ------------------------------------------------------ */

struct settings {
	size_t buffer_size;
	unsigned buffers;
	unsigned threads;
	int level;
	bool times;
};

static bool settings_get(const struct ht_record_options *o,
			 struct settings *s, const char *name,
			 struct ht_error *err)
{
	static const struct ht_record_options defaults = {
		.compression_level = -1,
	};

	if (!o)
		o = &defaults;
	s->buffer_size = o->buffer_size ? o->buffer_size : DEFAULT_BUFFER_SIZE;
	if (s->buffer_size < MIN_BUFFER_SIZE)
		s->buffer_size = MIN_BUFFER_SIZE;
	s->buffers = o->buffers ? o->buffers : DEFAULT_BUFFERS;
	s->threads = o->max_threads ? o->max_threads : DEFAULT_MAX_THREADS;
	s->times = o->times;
	s->level = o->compression_level == -1 ? DEFAULT_LEVEL :
		o->compression_level;
	if (s->buffer_size > MAX_BUFFER_SIZE) {
		err_plain(err, HT_E_INVALID, name,
			  "buffer size %zu is over the limit of %u bytes",
			  s->buffer_size, MAX_BUFFER_SIZE);
		return false;
	}
	if (s->buffers > MAX_BUFFERS || s->threads > MAX_THREADS_LIMIT) {
		err_plain(err, HT_E_INVALID, name,
			  "%u buffers or %u threads: at most %u and %u",
			  s->buffers, s->threads, MAX_BUFFERS,
			  MAX_THREADS_LIMIT);
		return false;
	}
	if (s->level < 0 || s->level > 9) {
		err_plain(err, HT_E_INVALID, name,
			  "compression level %d is not in 0..9 (or -1)",
			  o->compression_level);
		return false;
	}
	if (s->buffers > SIZE_MAX / s->buffer_size) {
		err_plain(err, HT_E_INVALID, name, "buffer pool too large");
		return false;
	}
	return true;
}

static bool header_check(const struct ht_header *h, const char *name,
			 struct ht_error *err)
{
	if (!h) {
		err_plain(err, HT_E_INVALID, name, "no trace header given");
		return false;
	}
	/* an older version's events are this version's too (convert) */
	if (h->version > HT_FORMAT_VERSION) {
		err_plain(err, HT_E_INVALID, name,
			  "header version %u: this library writes version %u",
			  h->version, HT_FORMAT_VERSION);
		return false;
	}
	if (h->pointer_size != 4 && h->pointer_size != 8) {
		err_plain(err, HT_E_INVALID, name,
			  "pointer size %u is neither 4 nor 8", h->pointer_size);
		return false;
	}
	if (h->n_metadata && !h->metadata) {
		err_plain(err, HT_E_INVALID, name, "metadata missing");
		return false;
	}
	for (size_t i = 0; i < h->n_metadata; i++) {
		if (!h->metadata[i].key || !h->metadata[i].value) {
			err_plain(err, HT_E_INVALID, name,
				  "metadata entry %zu has no key or no value", i);
			return false;
		}
	}
	return true;
}

/* Frees what recorder_create got, however far it got. */
static void recorder_free(struct ht_recorder *rec)
{
	if (rec->key_created)
		pthread_key_delete(rec->key);
	if (rec->index)
		munmap(rec->index, rec->index_cap * sizeof(*rec->index));
	if (rec->z_ready)
		deflateEnd(&rec->z);
	free(rec->out);
	if (rec->pool)
		munmap(rec->pool, rec->pool_len);
	if (rec->bufs) {
		sem_destroy(&rec->free_sem);
		sem_destroy(&rec->work_sem);
	}
	free(rec->bufs);
	free(rec->slots);
	free(rec->name);
	free(rec);
}

static bool pool_create(struct ht_recorder *rec, const struct settings *s)
{
	rec->buffer_size = s->buffer_size;
	rec->n_buffers = s->buffers;
	rec->pool_len = (size_t)s->buffers * s->buffer_size;
	rec->bufs = calloc(s->buffers, sizeof(*rec->bufs));
	if (!rec->bufs)
		return false;
	if (sem_init(&rec->free_sem, 0, s->buffers) != 0 ||
	    sem_init(&rec->work_sem, 0, 0) != 0) {
		free(rec->bufs);
		rec->bufs = NULL;
		return false;
	}
	/* populated now: page faults on first touch would otherwise land on
	 * the callback path, inside GC pauses (and cost a third of a call) */
	rec->pool = mmap(NULL, rec->pool_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (rec->pool == MAP_FAILED) {
		rec->pool = NULL;
		return false;
	}
	atomic_init(&rec->free_head, 0);
	for (unsigned i = 0; i < s->buffers; i++) {
		rec->bufs[i].data = rec->pool + (size_t)i * s->buffer_size;
		atomic_init(&rec->bufs[i].next_free, 0);
		pool_push(rec, &rec->bufs[i]);
	}
	atomic_init(&rec->full_head, NULL);
	return true;
}

static bool slots_create(struct ht_recorder *rec, const struct settings *s)
{
	void *p;

	if (posix_memalign(&p, 64, (size_t)s->threads * sizeof(struct slot)))
		return false;
	memset(p, 0, (size_t)s->threads * sizeof(struct slot));
	rec->slots = p;
	rec->n_slots = s->threads;
	for (unsigned i = 0; i < s->threads; i++) {
		struct slot *sl = &rec->slots[i];

		atomic_init(&sl->state, SLOT_IDLE);
		atomic_init(&sl->owned, 0);
		atomic_init(&sl->buf, NULL);
		atomic_init(&sl->events, 0);
		sl->rec = rec;
	}
	return true;
}

static bool writer_state_create(struct ht_recorder *rec, int level)
{
	memset(&rec->z, 0, sizeof(rec->z));
	if (deflateInit2(&rec->z, level, Z_DEFLATED, 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	rec->z_ready = true;
	rec->level = level;
	rec->out_cap = HT_CHUNK_HEADER_SIZE +
		deflateBound(&rec->z, (uLong)rec->buffer_size);
	rec->out = malloc(rec->out_cap);
	if (!rec->out)
		return false;
	rec->index_cap = 4096;
	rec->index = mmap(NULL, rec->index_cap * sizeof(*rec->index),
			  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (rec->index == MAP_FAILED) {
		rec->index = NULL;
		return false;
	}
	return true;
}

/*
 * The thread-exit destructor frees a thread's slot. glibc's
 * pthread_setspecific allocates a second-level array for keys from 32 up,
 * on the callback path; with such a key the shim does without it: a thread
 * that exits then keeps its slot, and its last buffer goes out with the
 * next barrier or at close.
 */
static void key_create(struct ht_recorder *rec)
{
	if (pthread_key_create(&rec->key, slot_release_at_exit) != 0)
		return;
	rec->key_created = true;
#ifdef __GLIBC__
	rec->use_key = (unsigned long)rec->key < 32;
#else
	rec->use_key = true;
#endif
}

static bool header_write(struct ht_recorder *rec, const struct ht_header *h,
			 struct ht_error *err)
{
	size_t plen, total, done;
	uint8_t *payload = codec_put_header(h, &plen), *buf;
	int e;

	if (!payload) {
		err_plain(err, HT_E_NOMEM, rec->name, "out of memory");
		return false;
	}
	if (plen > HT_MAX_HEADER_PAYLOAD) {
		free(payload);
		err_plain(err, HT_E_LIMIT, rec->name,
			  "trace header of %zu bytes is over the limit of %u",
			  plen, HT_MAX_HEADER_PAYLOAD);
		return false;
	}
	total = HT_FILE_HEADER_FIXED + plen + 4;
	buf = malloc(total);
	if (!buf) {
		free(payload);
		err_plain(err, HT_E_NOMEM, rec->name, "out of memory");
		return false;
	}
	memcpy(buf, HT_MAGIC, HT_MAGIC_LEN);
	put_le32(buf + 8, rec->version);
	put_le32(buf + 12, (uint32_t)plen);
	memcpy(buf + HT_FILE_HEADER_FIXED, payload, plen);
	put_le32(buf + HT_FILE_HEADER_FIXED + plen,
		 (uint32_t)crc32(0, buf, (uInt)(HT_FILE_HEADER_FIXED + plen)));
	e = write_all(rec->fd, buf, total, &done);
	free(buf);
	free(payload);
	if (e) {
		err_sys(err, e, rec->name, "cannot write the header");
		return false;
	}
	rec->offset = total;
	atomic_init(&rec->bytes_written, total);
	return true;
}

/* The writer runs with every signal blocked: the host's handlers are not
 * for it, and SIGXFSZ then leaves its writes failing with EFBIG. */
static int writer_start(struct ht_recorder *rec)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&rec->thread, NULL, writer_main, rec);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return rc;
	rec->thread_started = true;
	pthread_setname_np(rec->thread, "heaptrace-wr");
	return 0;
}

static struct ht_recorder *recorder_create(int fd, const char *name,
					   const struct ht_header *h,
					   const struct settings *s,
					   struct ht_error *err)
{
	struct ht_recorder *rec;
	struct proto_state st;
	uint64_t word;
	int rc;
	void *p;

	/* aligned: its hot atomics sit on cache lines of their own */
	if (posix_memalign(&p, _Alignof(struct ht_recorder), sizeof(*rec))) {
		err_plain(err, HT_E_NOMEM, name, "out of memory");
		return NULL;
	}
	rec = memset(p, 0, sizeof(*rec));
	rec->fd = fd;
	rec->name = strdup(name);
	if (!rec->name || !slots_create(rec, s) || !pool_create(rec, s) ||
	    !writer_state_create(rec, s->level)) {
		err_plain(err, HT_E_NOMEM, name,
			  "out of memory for %u buffers of %zu bytes",
			  s->buffers, s->buffer_size);
		goto fail;
	}
	key_create(rec);
	if (!rec->key_created) {
		err_plain(err, HT_E_LIMIT, name,
			  "no thread-specific data key left");
		goto fail;
	}
	proto_init(&st);
	memcpy(&word, &st, sizeof(word));
	atomic_init(&rec->proto, word);
	rec->version = h->version ? h->version : HT_FORMAT_VERSION;
	rec->stamp_times = s->times && rec->version >= 3;
	rec->start_ns = monotonic_ns();
	if (!header_write(rec, h, err))
		goto fail;
	rec->serial = atomic_fetch_add(&last_serial, 1) + 1;
	if ((rc = writer_start(rec)) == EAGAIN) {
		err_plain(err, HT_E_NOMEM, name, "cannot start the writer "
			  "thread: not enough memory or threads left");
		goto fail;
	} else if (rc != 0) {
		err_sys(err, rc, name, "cannot start the writer thread");
		goto fail;
	}
	return rec;
fail:
	recorder_free(rec);
	return NULL;
}

struct ht_recorder *ht_recorder_open(const char *path,
				     const struct ht_header *header,
				     const struct ht_record_options *options,
				     struct ht_error *err)
{
	struct ht_recorder *rec;
	struct settings s;
	int fd;

	err_clear(err);
	if (!path) {
		err_plain(err, HT_E_INVALID, NULL, "no output path given");
		return NULL;
	}
	if (!header_check(header, path, err) ||
	    !settings_get(options, &s, path, err))
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		err_sys(err, errno, path, "cannot open for writing");
		return NULL;
	}
	rec = recorder_create(fd, path, header, &s, err);
	if (!rec)
		close(fd);
	return rec;
}

struct ht_recorder *ht_recorder_open_fd(int fd, const char *name,
					const struct ht_header *header,
					const struct ht_record_options *options,
					struct ht_error *err)
{
	struct ht_recorder *rec = NULL;
	struct settings s;

	err_clear(err);
	if (!name)
		name = "-";
	if (fd < 0)
		err_plain(err, HT_E_INVALID, name, "bad file descriptor %d", fd);
	else if (header_check(header, name, err) &&
		 settings_get(options, &s, name, err))
		rec = recorder_create(fd, name, header, &s, err);
	if (!rec && fd >= 0)
		close(fd);
	return rec;
}

/* Every thread's buffer to the writer. Threads should have stopped
 * recording; one still inside an event is waited for a while, then left. */
static void flush_slots(struct ht_recorder *rec)
{
	steal_others(rec, NULL, CLOSE_PATIENCE_NS);
}

/* A dump or GC still open at close is a violation the shim saw. */
static void count_unfinished(struct ht_recorder *rec)
{
	uint64_t word = atomic_load(&rec->proto);
	struct proto_state st;
	enum ht_violation_code code;

	memcpy(&st, &word, sizeof(st));
	code = proto_finish(&st);
	if (code != HT_V_NONE && (unsigned)code < HT_V_COUNT_)
		atomic_fetch_add(&rec->violations[code], 1);
}

enum ht_error_code ht_recorder_close(struct ht_recorder *rec,
				     struct ht_error *err)
{
	enum ht_error_code code;

	err_clear(err);
	if (!rec) {
		err_plain(err, HT_E_INVALID, NULL, "no recorder to close");
		return HT_E_INVALID;
	}
	flush_slots(rec);
	count_unfinished(rec);
	atomic_store(&rec->stop, true);
	sem_post(&rec->work_sem);
	pthread_join(rec->thread, NULL);
	/* close can report a write that failed late (NFS, quota) */
	if (close(rec->fd) != 0 && !failed(rec))
		fail(rec, HT_E_IO, errno, rec->offset, "cannot close");
	code = ht_recorder_error(rec, err);
	recorder_free(rec);
	return code;
}

enum ht_error_code ht_recorder_sync(struct ht_recorder *rec)
{
	const struct timespec pause = { 0, 20 * 1000 };
	uint64_t batch;

	if (!rec)
		return HT_E_INVALID;
	/* A batch the writer numbers after this load takes every push this
	 * thread made before it (all seq_cst). */
	batch = atomic_load(&rec->batches_taken) + 1;
	sem_post(&rec->work_sem);
	while (atomic_load(&rec->batches_done) < batch)
		nanosleep(&pause, NULL);
	return (enum ht_error_code)atomic_load(&rec->failed);
}

enum ht_error_code ht_recorder_error(const struct ht_recorder *rec,
				     struct ht_error *err)
{
	struct ht_recorder *r = (struct ht_recorder *)rec;
	int code;

	err_clear(err);
	if (!r) {
		err_plain(err, HT_E_INVALID, NULL, "no recorder");
		return HT_E_INVALID;
	}
	code = atomic_load_explicit(&r->failed, memory_order_acquire);
	if (!code)
		return HT_OK;
	if (r->fail_errno)
		err_at_offset(err, (enum ht_error_code)code, r->name,
			      r->fail_offset, "%s: %s", r->fail_what,
			      strerror(r->fail_errno));
	else
		err_at_offset(err, (enum ht_error_code)code, r->name,
			      r->fail_offset, "%s", r->fail_what);
	if (err)
		err->sys_errno = r->fail_errno;
	return (enum ht_error_code)code;
}

void ht_recorder_stats(const struct ht_recorder *rec, struct ht_record_stats *st)
{
	/* the counters are atomics, read without changing anything */
	struct ht_recorder *r = (struct ht_recorder *)rec;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	for (unsigned i = 0; i < r->n_slots; i++)
		st->events += atomic_load_explicit(&r->slots[i].events,
						   memory_order_relaxed);
	st->dumps = atomic_load_explicit(&r->dumps, memory_order_relaxed);
	st->gcs = atomic_load_explicit(&r->gcs, memory_order_relaxed);
	st->chunks_written = atomic_load_explicit(&r->chunks_written,
						  memory_order_relaxed);
	st->bytes_written = atomic_load_explicit(&r->bytes_written,
						 memory_order_relaxed);
	st->bytes_uncompressed = atomic_load_explicit(&r->bytes_uncompressed,
						      memory_order_relaxed);
	st->waits = atomic_load_explicit(&r->waits, memory_order_relaxed);
	st->dropped_events = atomic_load_explicit(&r->dropped,
						  memory_order_relaxed);
	for (unsigned c = 0; c < HT_V_COUNT_; c++)
		st->violations[c] = atomic_load_explicit(&r->violations[c],
							 memory_order_relaxed);
}
