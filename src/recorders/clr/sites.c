/*
 * sites.c - allocation sites (record --sites): the stack of the code that
 * allocated an object, for a sample of the allocations, so that each
 * sample is followed from its allocation to every dump and to its death
 * (doc/design.md section 1, the CLR).
 *
 * Two samplers, chosen at the start:
 *   - the runtime's own (sites, or sites=102400, on .NET 10 and later):
 *     the AllocationSampled event of its randomized allocation sampling,
 *     on the profiler's EventPipe session (gc_events.c). Each byte
 *     allocated is a Bernoulli trial of probability 1/102400, per thread,
 *     and an object is sampled when one of its bytes succeeds: with
 *     probability 1 - (1 - 1/102400)^s, which is 1 - exp(-s/102400) to
 *     within 5e-6 of itself for any size, independently of every other
 *     object. The interval is the runtime's and cannot be changed. The
 *     event is delivered on the allocating thread, inside the
 *     allocation, in cooperative mode (no GC starts until it returns),
 *     before the object has its MethodTable, and with no stack (the
 *     runtime walks an event's stack only for buffered sessions, not for
 *     a profiler's synchronous one): the thread walks its own
 *     (DoStackSnapshot, which a callback may), and the object is not
 *     read there. Its ObjectSize is rounded up to a pointer's multiple,
 *     where the dumps give the object's own (38 bytes for a string, not
 *     40): the sample waits in a queue and its size is read at the next
 *     GC's start, when the object is whole and has not moved yet.
 *   - the recorder's own (sites=all, any other interval, --allocations
 *     with sites, runtimes before .NET 10): ObjectAllocated, which makes
 *     every allocation take the runtime's slow path, and per thread a
 *     count of bytes down to the next sample, drawn from the exponential
 *     distribution of mean INTERVAL after each sample (the Poisson byte
 *     process: each object of s bytes sampled with probability
 *     1 - exp(-s/INTERVAL), independently); a sampled allocation's stack
 *     is a DoStackSnapshot of the current thread. With --allocations too,
 *     the runtime's sampler would report objects that ObjectAllocated
 *     reports as well: so the recorder's is used then, one event per
 *     object. These samples are recorded at once.
 *
 * An allocation's address is its id only until the next GC moves it, so
 * its object_allocated is in the trace before that GC's gc_started at the
 * latest. A frame's method id is its place (places.c), which needs the
 * runtime's code maps and the PDB: calls that take the runtime's locks,
 * forbidden to a thread inside an allocation (a GC on its way may have
 * suspended a thread that holds one, and waits for this one) and inside a
 * GC. So the allocating thread only looks each (function, address) up
 * among the places already found (frame_place_known, which never waits
 * for the lock), and for a frame not met before wakes the recorder thread,
 * which places it with the runtime running, and waits for it, 100 ms at
 * most. A GC that starts with samples waiting records them first, before
 * gc_started, each frame still unplaced by its FunctionID (its method
 * alone, no line), counted. A stack is interned: declared once, under
 * sites_lock, and its buffer handed to the writer before the lock is let
 * go, so that no thread's allocation that names it can reach the file
 * first. The GC's path allocates nothing: the stack table keeps room for
 * a new stack per waiting sample, and a stack that would not fit is
 * recorded as none, counted.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/say.h"
#include "util/alloc.h"
#include "util/le.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* AllocationSampled (event 303, gc_events.c): keyword AllocationSampling,
 * level informational */
#define KEYWORD_ALLOCATION_SAMPLING 0x80000000000ull
#define RUNTIME_INTERVAL 102400
#define RUNTIME_SAMPLING_SINCE 10

/* The innermost frames a stack keeps (the format allows more). */
#define SITE_FRAMES 64
/* How long an allocating thread waits for its frames to be placed. */
#define PLACING_WAIT_MS 100
/* Room for the allocations waiting at first (the queue grows outside
 * GCs), and for new stacks beyond those that wait. */
#define PENDING_FIRST 4096
#define STACKS_ROOM 1024
#define STACKS_FIRST 4096

enum { SITES_OFF, SITES_BY_EVENTS, SITES_BY_CALLBACK };

/* One sampled allocation, its frames innermost first: FunctionID (0 for
 * native code) and return address. size 0: not known yet (the runtime's
 * sampler reports the object before it is made), read at the next GC's
 * start. */
struct sample {
	uint64_t object, cls, size;
	uint32_t n;
	uint64_t fid[SITE_FRAMES], ip[SITE_FRAMES];
};

/* A stack of the trace: its frames at pool[first, first + n). */
struct stack {
	uint64_t hash;
	size_t first;
	uint32_t n;
};

static struct {
	int mode;
	uint64_t interval;     /* REC_SITES_ALL: every allocation */
	char metadata[24];

	pthread_mutex_t lock;  /* sites_lock: all below */
	struct sample *pending;
	size_t n_pending, pending_cap;
	struct stack *stacks;
	size_t n_stacks, stacks_cap;
	uint32_t *slots;       /* open addressing: index + 1 into stacks */
	size_t slots_mask;
	ht_id *pool;
	size_t pool_used, pool_cap;

	/* rounds of placing asked for and done (sites_resolve) */
	_Atomic uint64_t asked, done;
	/* for HEAPTRACE_VERBOSE */
	_Atomic uint64_t samples, deferred, at_gc, dropped, no_stack, late;
} sites = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- choosing the sampler -------------------------------------------------- */

bool sites_start(clr_ulong *mask)
{
	bool runtime_interval;

	if (!state.opt.sites)
		return true;
	if (state.attached) {
		say("allocation sites are recorded only from the program's "
		    "start, not attached; not recording");
		return false;
	}
	sites.interval = state.opt.sites_interval == REC_SITES_DEFAULT
				 ? RUNTIME_INTERVAL
				 : state.opt.sites_interval;
	runtime_interval = sites.interval == RUNTIME_INTERVAL;
	if (runtime_interval && !state.opt.allocations &&
	    state.info_level >= 12 &&
	    runtime_major() >= RUNTIME_SAMPLING_SINCE) {
		sites.mode = SITES_BY_EVENTS;
	} else {
		if (runtime_interval && !state.opt.allocations)
			say("the runtime's allocation sampling needs .NET %d: "
			    "sites are sampled by the recorder, in every "
			    "allocation (slower)", RUNTIME_SAMPLING_SINCE);
		sites.mode = SITES_BY_CALLBACK;
		*mask |= CLR_ENABLE_OBJECT_ALLOCATED |
			 CLR_MONITOR_OBJECT_ALLOCATED | CLR_ENABLE_STACK_SNAPSHOT;
	}
	if (sites.interval == REC_SITES_ALL)
		snprintf(sites.metadata, sizeof(sites.metadata), "all");
	else
		snprintf(sites.metadata, sizeof(sites.metadata), "%llu",
			 (unsigned long long)sites.interval);
	sites.pending_cap = PENDING_FIRST;
	sites.pending = calloc(sites.pending_cap, sizeof(*sites.pending));
	sites.stacks_cap = STACKS_FIRST;
	sites.stacks = calloc(sites.stacks_cap, sizeof(*sites.stacks));
	sites.slots_mask = 2 * STACKS_FIRST - 1;
	sites.slots = calloc(sites.slots_mask + 1, sizeof(*sites.slots));
	sites.pool_cap = (size_t)STACKS_FIRST * SITE_FRAMES;
	sites.pool = calloc(sites.pool_cap, sizeof(*sites.pool));
	if (!sites.pending || !sites.stacks || !sites.slots || !sites.pool) {
		say("out of memory; not recording");
		return false;
	}
	return true;
}

uint64_t sites_keywords(void)
{
	return sites.mode == SITES_BY_EVENTS ? KEYWORD_ALLOCATION_SAMPLING : 0;
}

const char *sites_metadata(void)
{
	return sites.mode == SITES_OFF ? NULL : sites.metadata;
}

/* ---- stacks ---------------------------------------------------------------- */

static uint64_t stack_hash(const ht_id *frames, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h;
}

/* Room for a new stack for each allocation waiting and STACKS_ROOM more,
 * so that a GC's path never grows the tables; under sites_lock, outside
 * GCs. */
static void make_room(void)
{
	size_t more = sites.n_pending + STACKS_ROOM;
	size_t want = sites.n_stacks + more;

	if (want > sites.stacks_cap &&
	    ALLOC_GROW(sites.stacks, want, sites.stacks_cap) < 0)
		return;
	if (sites.pool_used + more * SITE_FRAMES > sites.pool_cap)
		ALLOC_GROW(sites.pool, sites.pool_used + more * SITE_FRAMES,
			   sites.pool_cap);
	if (2 * want > sites.slots_mask + 1) {
		size_t size = sites.slots_mask + 1;
		uint32_t *slots;

		while (2 * want > size)
			size *= 2;
		slots = calloc(size, sizeof(*slots));
		if (!slots)
			return;
		for (size_t i = 0; i < sites.n_stacks; i++) {
			size_t at = sites.stacks[i].hash & (size - 1);

			while (slots[at])
				at = (at + 1) & (size - 1);
			slots[at] = (uint32_t)i + 1;
		}
		free(sites.slots);
		sites.slots = slots;
		sites.slots_mask = size - 1;
	}
}

/* The id of the stack of frames, declared if new (and *fresh set); 0
 * when the tables have no room. Under sites_lock. */
static ht_id stack_id(const ht_id *frames, uint32_t n, bool *fresh)
{
	uint64_t hash = stack_hash(frames, n);
	size_t at = hash & sites.slots_mask;
	struct stack *s;

	*fresh = false;
	for (; sites.slots[at]; at = (at + 1) & sites.slots_mask) {
		s = &sites.stacks[sites.slots[at] - 1];
		if (s->hash == hash && s->n == n &&
		    memcmp(sites.pool + s->first, frames,
			   n * sizeof(*frames)) == 0)
			return sites.slots[at];
	}
	if (sites.n_stacks == sites.stacks_cap ||
	    2 * (sites.n_stacks + 1) > sites.slots_mask + 1 ||
	    sites.pool_used + n > sites.pool_cap)
		return 0;
	s = &sites.stacks[sites.n_stacks++];
	*s = (struct stack){hash, sites.pool_used, n};
	memcpy(sites.pool + sites.pool_used, frames, n * sizeof(*frames));
	sites.pool_used += n;
	sites.slots[at] = (uint32_t)sites.n_stacks;
	ht_stack(state.trace.rec, sites.n_stacks, n, frames);
	*fresh = true;
	return sites.n_stacks;
}

/* ---- recording a sample ---------------------------------------------------- */

/* Each frame's place, as far as known without asking the runtime: true
 * when all are; the others by FunctionID. */
static bool frames_of(const struct sample *s, ht_id *frames, uint32_t *n)
{
	bool all = true;

	*n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		ht_id id;

		if (!s->fid[i])
			continue; /* native code: no method of ours */
		if (!frame_place_known(s->fid[i], s->ip[i], &id)) {
			id = s->fid[i];
			all = false;
		}
		frames[(*n)++] = id;
	}
	return all;
}

/* Writes the sample: its stack, then the allocation. batch: the caller
 * hands the buffer off before it lets sites_lock go, or is a GC's start
 * (gc_started hands every thread's buffer off before itself). Under
 * sites_lock. */
static void write_sample(const struct sample *s, const ht_id *frames,
			 uint32_t n, bool batch)
{
	bool fresh = false;
	ht_id stack = stack_id(frames, n, &fresh);

	if (!stack)
		atomic_fetch_add(&sites.no_stack, 1);
	ht_object_allocated_by(state.trace.rec, s->object, s->cls, s->size,
			       stack);
	atomic_fetch_add(&sites.samples, 1);
	/* the stack reaches the file before any other thread's allocation
	 * that names it */
	if (fresh && !batch)
		ht_recorder_hand_off(state.trace.rec);
}

/* On the allocating thread, outside GCs: recorded now when every frame
 * is placed and the size known, else queued (for the recorder thread to
 * place its frames, and the next GC's start, which records it at the
 * latest). */
static void record_sample(const struct sample *s)
{
	ht_id frames[SITE_FRAMES];
	uint32_t n;
	bool placed = frames_of(s, frames, &n);
	uint64_t ticket = 0;

	for (uint32_t i = 0; i < s->n; i++)
		saw_method(s->fid[i]);
	saw_class(s->cls);
	pthread_mutex_lock(&sites.lock);
	if (!placed)
		ticket = atomic_fetch_add(&sites.asked, 1) + 1;
	if (placed && s->size) {
		make_room();
		write_sample(s, frames, n, false);
	} else if (sites.n_pending < sites.pending_cap ||
		   ALLOC_GROW(sites.pending, sites.n_pending + 1,
			      sites.pending_cap) == 0) {
		sites.pending[sites.n_pending++] = *s;
		if (!placed)
			atomic_fetch_add(&sites.deferred, 1);
		make_room();
	} else {
		atomic_fetch_add(&sites.dropped, 1); /* out of memory */
	}
	pthread_mutex_unlock(&sites.lock);
	if (placed)
		return;
	/* This thread is inside an allocation, where no GC may start: the
	 * recorder thread places the frames with the runtime running. A GC
	 * on its way waits for this thread as well, and its suspended
	 * threads may hold a lock the placing needs: so a bounded wait, after
	 * which the next GC's start records the frames not placed by method
	 * alone. */
	request(REQ_SITES);
	if (!wait_counter(&sites.done, ticket, PLACING_WAIT_MS))
		atomic_fetch_add(&sites.late, 1);
}

/* A waiting allocation, recorded: its frames by FunctionID where not
 * placed yet. in_gc: at a GC's start, where the runtime's objects may be
 * read. Under sites_lock. */
static void write_waiting(struct sample *s, bool in_gc)
{
	ht_id frames[SITE_FRAMES];
	uint32_t n;

	if (!frames_of(s, frames, &n))
		atomic_fetch_add(&sites.at_gc, 1);
	if (!s->size && in_gc)
		s->size = object_size((clr_uptr)s->object, (clr_uptr)s->cls);
	write_sample(s, frames, n, true);
}

/* ---- the runtime's sampler ------------------------------------------------- */

static clr_hresult on_site_frame(clr_uptr function, clr_uptr ip,
				 clr_uptr frame_info, uint32_t context_size,
				 uint8_t context[], void *data)
{
	struct sample *s = data;

	(void)frame_info, (void)context_size, (void)context;
	if (!function)
		return CLR_S_OK;
	s->fid[s->n] = function;
	s->ip[s->n++] = ip;
	return s->n == SITE_FRAMES ? CLR_S_FALSE : CLR_S_OK;
}

/* The payload: AllocationKind (u32), ClrInstanceID (u16), TypeID, TypeName
 * (UTF-16, ended by a 0 unit; empty as the runtime sends it), HeapIndex
 * (u32, not in every runtime's template), Address, ObjectSize,
 * SampledByteOffset. Read from its end, which the name does not move. */
void sites_sampled(const uint8_t *data, size_t size, clr_ulong n_frames,
		   const clr_uptr frames[])
{
	struct sample s;
	size_t at = 14;

	if (sites.mode != SITES_BY_EVENTS || size < at + 2 + 24) {
		atomic_fetch_add(&sites.dropped, 1);
		return;
	}
	while (at + 2 <= size && get_le16(data + at))
		at += 2;
	at += 2;
	if (at + 24 > size) {
		atomic_fetch_add(&sites.dropped, 1);
		return;
	}
	s.cls = get_le64(data + 6);
	s.object = get_le64(data + size - 24);
	/* ObjectSize is the size the sampler drew on, rounded up to a
	 * pointer's multiple; the dumps give the object's own (a string of
	 * 38 bytes, not 40): read at the next GC's start */
	s.size = 0;
	s.n = 0;
	/* a profiler's session gets no stack with its events (the
	 * runtime walks stacks only for buffered sessions): the thread's
	 * own, which a callback may walk, unless the runtime gave one */
	if (!n_frames)
		state.info->vtbl->DoStackSnapshot(state.info, 0, on_site_frame,
						  0, &s, NULL, 0);
	for (clr_ulong i = 0; i < n_frames && s.n < SITE_FRAMES; i++) {
		clr_uptr fid = 0;

		if (CLR_FAILED(state.info->vtbl->GetFunctionFromIP(
			    state.info, frames[i], &fid)) || !fid)
			continue;
		s.fid[s.n] = fid;
		s.ip[s.n++] = frames[i];
	}
	record_sample(&s);
}

/* ---- the recorder's sampler ------------------------------------------------ */

/* Per thread: a generator, and the bytes left to the next sample (the
 * first drawn at the thread's first allocation). Initial-exec: the
 * global-dynamic model of a dlopen'ed library may malloc at the first
 * access. */
struct sampler {
	uint64_t rng;
	double left;
	bool drawn;
};
static __thread struct sampler sampler
	__attribute__((tls_model("initial-exec")));

/* xorshift64*: a uniform draw in (0, 1]. */
static double uniform(struct sampler *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return ((t->rng * 0x2545f4914f6cdd1dULL >> 11) + 1) * 0x1p-53;
}

/* Exponential, of mean the interval: the bytes to the next point of the
 * Poisson process, memoryless, so that each object is sampled with
 * probability 1 - exp(-size/interval) whatever came before it. */
static double next_gap(struct sampler *t)
{
	return -log(uniform(t)) * (double)sites.interval;
}

static bool sampled(uint64_t size)
{
	struct sampler *t = &sampler;

	if (sites.interval == REC_SITES_ALL)
		return true;
	if (!t->drawn) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		t->rng = ((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ULL) ^
			 ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)now.tv_sec;
		if (!t->rng)
			t->rng = 1;
		t->left = next_gap(t);
		t->drawn = true;
	}
	t->left -= (double)size;
	if (t->left > 0)
		return false;
	/* a new process from this object's end */
	t->left = next_gap(t);
	return true;
}

bool sites_allocated(clr_uptr object, clr_uptr cls, uint64_t size)
{
	struct sample s;

	if (sites.mode != SITES_BY_CALLBACK || !sampled(size))
		return false;
	s.object = object;
	s.cls = cls;
	s.size = size;
	s.n = 0;
	/* the current thread's own stack, which this callback may walk;
	 * a walk cut short keeps the frames it gave */
	state.info->vtbl->DoStackSnapshot(state.info, 0, on_site_frame, 0, &s,
					  NULL, 0);
	record_sample(&s);
	return true;
}

/* ---- the waiting allocations ----------------------------------------------- */

void sites_enter_gc(void)
{
	if (sites.mode == SITES_OFF)
		return;
	pthread_mutex_lock(&sites.lock);
	for (size_t i = 0; i < sites.n_pending; i++)
		write_waiting(&sites.pending[i], true);
	sites.n_pending = 0;
	pthread_mutex_unlock(&sites.lock);
}

/* A frame to place: its function and return address. */
struct spot {
	uint64_t fid, ip;
};

/* The frames of the waiting allocations not placed yet, listed under
 * sites_lock; NULL when none (or no memory). */
static struct spot *unplaced(size_t *n)
{
	struct spot *v = NULL;
	size_t cap = 0;

	*n = 0;
	pthread_mutex_lock(&sites.lock);
	for (size_t i = 0; i < sites.n_pending; i++)
		for (uint32_t k = 0; k < sites.pending[i].n; k++) {
			struct sample *s = &sites.pending[i];
			ht_id id;

			if (!s->fid[k] ||
			    frame_place_known(s->fid[k], s->ip[k], &id))
				continue;
			if (ALLOC_GROW(v, *n + 1, cap) < 0)
				goto out;
			v[(*n)++] = (struct spot){s->fid[k], s->ip[k]};
		}
out:
	pthread_mutex_unlock(&sites.lock);
	return v;
}

/* The recorder thread places the waiting allocations' frames with no
 * lock of ours held (the runtime is asked), then records those whose
 * size is known; the others (the runtime's samples) wait for the next
 * GC's start, and those a GC took meanwhile are gone from the queue. A
 * GC in progress is left alone: it records them itself. */
void sites_resolve(void)
{
	struct spot *v;
	size_t n, kept = 0;
	uint64_t asked = atomic_load(&sites.asked);

	if (sites.mode == SITES_OFF)
		return;
	v = unplaced(&n);
	for (size_t i = 0; i < n; i++) {
		if (atomic_load(&state.tables) != TABLES_IDLE) {
			free(v);
			return;
		}
		frame_place(v[i].fid, v[i].ip);
	}
	free(v);
	pthread_mutex_lock(&sites.lock);
	make_room();
	for (size_t i = 0; i < sites.n_pending; i++) {
		if (sites.pending[i].size)
			write_waiting(&sites.pending[i], false);
		else
			sites.pending[kept++] = sites.pending[i];
	}
	sites.n_pending = kept;
	ht_recorder_hand_off(state.trace.rec);
	pthread_mutex_unlock(&sites.lock);
	announce(&sites.done, asked);
}

void sites_report(void)
{
	if (sites.mode == SITES_OFF)
		return;
	say("sites: %llu allocation%s sampled (%s, sites=%s), %zu stack%s, "
	    "%llu waited for their places (%llu past %d ms), %llu with frames "
	    "by method alone, %llu without a stack, %llu lost",
	    (unsigned long long)atomic_load(&sites.samples),
	    plural_s(atomic_load(&sites.samples)),
	    sites.mode == SITES_BY_EVENTS ? "the runtime's AllocationSampled"
					  : "ObjectAllocated",
	    sites.metadata, sites.n_stacks, plural_s(sites.n_stacks),
	    (unsigned long long)atomic_load(&sites.deferred),
	    (unsigned long long)atomic_load(&sites.late), PLACING_WAIT_MS,
	    (unsigned long long)atomic_load(&sites.at_gc),
	    (unsigned long long)atomic_load(&sites.no_stack),
	    (unsigned long long)atomic_load(&sites.dropped));
}
