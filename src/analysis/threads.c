/*
 * threads.c - the threads of a dump with their stacks, locals and
 * retained sizes (threads.h).
 *
 * A trace may begin a thread or a frame container more than once (its
 * roots accumulate, doc/design.md section 3), so the containers are
 * collected, sorted by key to keep each one's first begin, then put back
 * in trace order: a stack reads from the top as the recorder began it.
 * Threads and frames are few (thousands) next to objects, so sorting
 * them costs nothing worth a cleverer structure.
 */
#include "analysis/dominators.h"
#include "analysis/threads.h"
#include "lib/common/error.h"
#include "util/idmap.h"
#include "util/membudget.h"
#include "util/sort.h"

#include <stdlib.h>
#include <string.h>

/* A frame container as collected: its thread's index in first-seen
 * order, and where it was first begun. */
struct frame_key {
	size_t thread;
	uint8_t type;
	ht_id id, method;
	size_t seq;       /* its index in h->stack */
	size_t at;        /* its index in heap_threads.frames, once placed */
};

/* A thread root as collected: its thread, its frame (SIZE_MAX outside
 * frames) and its index in h->roots. */
struct root_key {
	size_t thread, frame, root;
};

struct work {
	const struct heap *h;
	const struct heap_dominators *d;
	struct heap_threads *t;
	struct idmap thread_at;   /* thread id -> index in t->threads */
	size_t cap_threads;
	struct frame_key *keys;   /* by (thread, type, id) once deduplicated */
	size_t n_keys, cap_keys;
	struct root_key *rk;
	size_t n_rk, cap_rk;
	uint32_t *held;           /* scratch: one thread's held objects */
	size_t n_held, cap_held;
	uint64_t charged;         /* the scratch arrays' */
};

static int compare_keys(const void *x, const void *y)
{
	const struct frame_key *a = x, *b = y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int compare_trace_order(const void *x, const void *y)
{
	const struct frame_key *a = x, *b = y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int compare_root_keys(const void *x, const void *y)
{
	const struct root_key *a = x, *b = y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->frame != b->frame)
		return a->frame < b->frame ? -1 : 1;
	return (a->root > b->root) - (a->root < b->root);
}

static int compare_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* The index of thread `id`, adding it (with no frames yet) when new. */
static int thread_index(struct work *w, ht_id id, size_t *at)
{
	struct heap_threads *t = w->t;
	uint32_t i = (uint32_t)t->n_threads;
	int rc = idmap_get_or_add(&w->thread_at, id, &i);

	if (rc < 0)
		return -1;
	*at = i;
	if (rc == 1)
		return 0;
	if (BUDGET_GROW(t->threads, t->n_threads + 1, w->cap_threads,
			t->charged) < 0)
		return -1;
	t->threads[t->n_threads++] = (struct thread_view){
		.id = id,
		.object = heap_find(w->h, id),
	};
	return 0;
}

/* Every thread and frame container of the dump, each frame once. */
static int collect_stacks(struct work *w)
{
	const struct heap *h = w->h;

	for (size_t i = 0; i < h->n_stack; i++) {
		const struct heap_stack_entry *e = &h->stack[i];
		size_t thread;

		if (e->type == HT_C_RT_THREAD) {
			if (thread_index(w, e->id1, &thread) < 0)
				return -1;
			continue;
		}
		if (!e->has_thread)
			continue; /* a frame with no thread: a violation */
		if (thread_index(w, e->thread, &thread) < 0 ||
		    BUDGET_GROW(w->keys, w->n_keys + 1, w->cap_keys,
				w->charged) < 0)
			return -1;
		w->keys[w->n_keys++] = (struct frame_key){
			.thread = thread, .type = e->type, .id = e->id1,
			.method = e->id2, .seq = i,
		};
	}
	return 0;
}

/* Keeps each frame's first begin, lays the frames out thread by thread
 * in trace order, and leaves w->keys sorted by key for the roots. */
static int place_frames(struct work *w)
{
	struct heap_threads *t = w->t;
	size_t n = 0;

	sort_items(w->keys, w->n_keys, sizeof(*w->keys), compare_keys);
	for (size_t i = 0; i < w->n_keys; i++) {
		if (n && w->keys[n - 1].thread == w->keys[i].thread &&
		    w->keys[n - 1].type == w->keys[i].type &&
		    w->keys[n - 1].id == w->keys[i].id)
			continue;
		w->keys[n++] = w->keys[i];
	}
	w->n_keys = n;
	sort_items(w->keys, n, sizeof(*w->keys), compare_trace_order);
	t->frames = budget_array(n ? n : 1, sizeof(*t->frames), &t->charged);
	if (!t->frames)
		return -1;
	t->n_frames = n;
	for (size_t i = 0; i < n; i++) {
		struct thread_view *v = &t->threads[w->keys[i].thread];

		if (v->n_frames == 0)
			v->first_frame = i;
		v->n_frames++;
		w->keys[i].at = i;
		t->frames[i] = (struct thread_frame){
			.type = w->keys[i].type,
			.id = w->keys[i].id,
			.method = w->keys[i].method,
		};
	}
	sort_items(w->keys, n, sizeof(*w->keys), compare_keys);
	return 0;
}

/* The frame of a root in a frame container, SIZE_MAX if none was
 * begun (which the replay does not let happen). */
static size_t frame_of(const struct work *w, size_t thread,
		       const struct heap_root *r)
{
	size_t lo = 0, hi = w->n_keys;
	struct frame_key key = {.thread = thread, .type = r->container,
				.id = r->id1};

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct frame_key *k = &w->keys[mid];
		int c = compare_keys(&key, k);

		/* key.seq is 0: compare on thread, type and id alone */
		if (k->thread == key.thread && k->type == key.type &&
		    k->id == key.id)
			return k->at;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return SIZE_MAX;
}

/* Each root of a thread under its thread and frame, in report order. */
static int collect_roots(struct work *w)
{
	const struct heap *h = w->h;
	struct heap_threads *t = w->t;

	for (size_t i = 0; i < h->n_roots; i++) {
		const struct heap_root *r = &h->roots[i];
		size_t thread, frame = SIZE_MAX;
		uint32_t at;

		if (!r->has_thread ||
		    !idmap_get(&w->thread_at, r->thread, &at))
			continue;
		thread = at;
		if (ht_container_is_frame(r->container))
			frame = frame_of(w, thread, r);
		else if (r->object != HEAP_NONE &&
			 r->object == t->threads[thread].object)
			continue; /* the thread object, shown as the thread */
		if (BUDGET_GROW(w->rk, w->n_rk + 1, w->cap_rk, w->charged) < 0)
			return -1;
		w->rk[w->n_rk++] = (struct root_key){thread, frame, i};
	}
	sort_items(w->rk, w->n_rk, sizeof(*w->rk), compare_root_keys);
	t->roots = budget_array(w->n_rk ? w->n_rk : 1, sizeof(*t->roots),
				&t->charged);
	if (!t->roots)
		return -1;
	t->n_roots = w->n_rk;
	for (size_t i = 0; i < w->n_rk; i++) {
		const struct root_key *k = &w->rk[i];

		t->roots[i] = k->root;
		if (k->frame == SIZE_MAX) {
			struct thread_view *v = &t->threads[k->thread];

			if (v->n_own++ == 0)
				v->first_own = i;
		} else {
			struct thread_frame *f = &t->frames[k->frame];

			if (f->n++ == 0)
				f->first = i;
		}
	}
	return 0;
}

/* What thread v retains: its object's subtree, and those of the other
 * distinct objects its roots (w->rk[from..to)) hold, each a child of the
 * virtual root. */
static int add_locals_retained(struct work *w, struct thread_view *v,
			       size_t from, size_t to)
{
	const struct heap *h = w->h;
	const struct heap_dominators *d = w->d;

	w->n_held = 0;
	for (size_t i = from; i < to; i++) {
		uint32_t x = h->roots[w->rk[i].root].object;

		if (x == HEAP_NONE || x == v->object ||
		    d->idom[x] != HEAP_VIRTUAL_ROOT)
			continue;
		if (BUDGET_GROW(w->held, w->n_held + 1, w->cap_held,
				w->charged) < 0)
			return -1;
		w->held[w->n_held++] = x;
	}
	sort_items(w->held, w->n_held, sizeof(*w->held), compare_u32);
	for (size_t i = 0; i < w->n_held; i++)
		if (i == 0 || w->held[i] != w->held[i - 1])
			v->locals_retained += d->retained[w->held[i]];
	return 0;
}

static int retained_sizes(struct work *w)
{
	struct heap_threads *t = w->t;
	const struct heap_dominators *d = w->d;

	for (size_t i = 0; i < t->n_threads; i++) {
		struct thread_view *v = &t->threads[i];

		if (v->object != HEAP_NONE &&
		    d->idom[v->object] == HEAP_VIRTUAL_ROOT)
			v->object_retained = d->retained[v->object];
	}
	/* w->rk is sorted by thread: one run each */
	for (size_t i = 0, j; i < w->n_rk; i = j) {
		for (j = i + 1; j < w->n_rk && w->rk[j].thread == w->rk[i].thread;
		     j++)
			;
		if (add_locals_retained(w, &t->threads[w->rk[i].thread], i,
					j) < 0)
			return -1;
	}
	for (size_t i = 0; i < t->n_threads; i++)
		t->threads[i].retained = t->threads[i].object_retained +
					 t->threads[i].locals_retained;
	return 0;
}

static int compare_threads(const void *x, const void *y)
{
	const struct thread_view *a = x, *b = y;

	if (a->retained != b->retained)
		return a->retained > b->retained ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int compute(struct work *w)
{
	struct heap_threads *t = w->t;

	if (collect_stacks(w) < 0 || place_frames(w) < 0 ||
	    collect_roots(w) < 0 || retained_sizes(w) < 0)
		return -1;
	/* frames and roots are placed by index, so the views can move */
	sort_items(t->threads, t->n_threads, sizeof(*t->threads),
		   compare_threads);
	return 0;
}

int heap_threads(const struct heap *h, const struct heap_dominators *d,
		 struct heap_threads *t, struct ht_error *err)
{
	struct work w = {.h = h, .d = d, .t = t};
	int rc;

	memset(t, 0, sizeof(*t));
	idmap_init(&w.thread_at);
	rc = compute(&w);
	idmap_free(&w.thread_at);
	free(w.keys);
	free(w.rk);
	free(w.held);
	mem_budget_release(w.charged);
	if (rc < 0) {
		heap_threads_free(t);
		if (mem_budget_exceeded())
			err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
				  mem_budget_limit());
		else
			err_plain(err, HT_E_NOMEM, NULL,
				  "out of memory listing the threads");
	}
	return rc;
}

void heap_threads_free(struct heap_threads *t)
{
	free(t->threads);
	free(t->frames);
	free(t->roots);
	mem_budget_release(t->charged);
	memset(t, 0, sizeof(*t));
}
