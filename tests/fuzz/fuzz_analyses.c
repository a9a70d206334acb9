/*
 * fuzz_analyses.c - what the replay and the analyses must get right on any
 * input a reader accepts (fuzz_replay_and_analyse in fuzz.h): the protocol
 * state machine as `check` drives it, then the heap graph of every dump
 * with its dominators, threads and root paths, as the analyses build them;
 * its values read, each object's collection figures and label, and what
 * `waste` finds in it.
 *
 * Then the relocation tracker over the whole trace, as `stats` and
 * `history` drive it.
 *
 * Not crashing is not enough: an analysis that answers wrongly on odd
 * input is the failure a memory tool must not have. So each answer is
 * checked: the graph's own invariants on every dump, and on small dumps
 * the dominator tree, the retained sizes and the shortest paths against
 * the definitions, computed the slow way; the tracker's every fate and
 * summary against the naive reference of tests/unit/reloc_reference.c,
 * and what it says of one id (history's first pass) against what it says
 * watching every object.
 */
#include "fuzz.h"

#include "analysis/collections.h"
#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "analysis/labels.h"
#include "analysis/levels.h"
#include "analysis/paths.h"
#include "analysis/reach.h"
#include "analysis/threads.h"
#include "analysis/waste.h"
#include "../unit/reloc_reference.h"
#include "analysis/relocation.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Dumps of at most this many objects, and roots, are checked against the
 * definitions (one 64-bit set per object, a search per root). */
#define NAIVE_MAX 64
#define NAIVE_MAX_ROOTS 1024
#define PATHS_MAX 4

/* ---- the replay ---------------------------------------------------------- */

/* The stacks of the input's allocations that name one, in order: what
 * the tracker must say at their allocated steps (check_watching). */
static struct {
	ht_id stack[RREF_MAX_STEPS];
	size_t n;
	bool too_many;
} allocation_stacks;

struct replay_seen {
	uint64_t events, violations;
	uint64_t dumps_begun, dumps_ended;
	bool dump_open;
	int64_t last_dump;
};

static int on_event(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	struct replay_seen *s = ctx;

	fuzz_digest_event(0, ev);
	FUZZ_CHECK(st->event_index == s->events,
		   "replay state says event %llu, it is event %llu",
		   (unsigned long long)st->event_index,
		   (unsigned long long)s->events);
	FUZZ_CHECK(!st->in_dump || st->dump >= 0, "in a dump numbered %lld",
		   (long long)st->dump);
	FUZZ_CHECK(!st->in_gc || st->gc >= 0, "in a GC numbered %lld",
		   (long long)st->gc);
	if (ev->type == HT_EV_OBJECT_ALLOCATED && ev->u.object_allocated.stack) {
		if (allocation_stacks.n == RREF_MAX_STEPS)
			allocation_stacks.too_many = true;
		else
			allocation_stacks.stack[allocation_stacks.n++] =
				ev->u.object_allocated.stack;
	}
	s->events++;
	return 0;
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	struct replay_seen *s = ctx;

	FUZZ_CHECK(!s->dump_open, "a dump begins inside another");
	FUZZ_CHECK(st->dump == s->last_dump + 1, "dump %lld follows dump %lld",
		   (long long)st->dump, (long long)s->last_dump);
	s->dump_open = true;
	s->last_dump = st->dump;
	s->dumps_begun++;
	return 0;
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct replay_seen *s = ctx;

	FUZZ_CHECK(s->dump_open && st->dump == s->last_dump,
		   "dump %lld ends without having begun", (long long)st->dump);
	s->dump_open = false;
	s->dumps_ended++;
	return 0;
}

static void on_violation(void *ctx, const struct ht_violation *v)
{
	struct replay_seen *s = ctx;

	FUZZ_CHECK(v->code > HT_V_NONE && v->code < HT_V_COUNT_,
		   "violation code %d", v->code);
	FUZZ_CHECK(ht_violation_name(v->code) && ht_violation_text(v->code),
		   "violation %d without a name", v->code);
	FUZZ_CHECK(memchr(v->detail, 0, sizeof(v->detail)),
		   "violation detail not terminated");
	s->violations++;
}

static void replay(const uint8_t *data, size_t size, enum fuzz_form form)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
		.on_violation = on_violation,
	};
	struct replay_seen seen = { .last_dump = -1 };
	struct ht_replay_summary sum;
	struct ht_error err;
	struct ht_reader *r;
	int rc;

	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	allocation_stacks.n = 0;
	allocation_stacks.too_many = false;
	r = fuzz_reader(data, size, form, FUZZ_SEEKABLE, &err);
	if (!r)
		return;
	rc = ht_replay(r, &cb, &seen, &sum, &err);
	FUZZ_CHECK(rc == 0 || rc == -1, "ht_replay returned %d", rc);
	if (rc < 0)
		fuzz_check_error(&err, "ht_replay");
	FUZZ_CHECK(sum.events == seen.events, "summary: %llu events, seen %llu",
		   (unsigned long long)sum.events,
		   (unsigned long long)seen.events);
	FUZZ_CHECK(sum.violations == seen.violations,
		   "summary: %llu violations, reported %llu",
		   (unsigned long long)sum.violations,
		   (unsigned long long)seen.violations);
	FUZZ_CHECK(seen.dumps_begun == seen.dumps_ended && !seen.dump_open,
		   "%llu dumps begun, %llu ended",
		   (unsigned long long)seen.dumps_begun,
		   (unsigned long long)seen.dumps_ended);
	FUZZ_CHECK(sum.dumps == seen.dumps_begun,
		   "summary: %llu dumps, %llu begun",
		   (unsigned long long)sum.dumps,
		   (unsigned long long)seen.dumps_begun);
	ht_reader_close(r);
}

/* ---- the graph ----------------------------------------------------------- */

static bool is_object(const struct heap *h, uint32_t i)
{
	return i < h->n;
}

static bool small(const struct heap *h)
{
	return h->n <= NAIVE_MAX && h->n_roots <= NAIVE_MAX_ROOTS;
}

static void check_graph(const struct heap *h)
{
	uint64_t refs = h->n ? heap_ref_start(h, h->n) : 0, bytes = 0, nonnull = 0;
	char buf[64];

	FUZZ_CHECK(h->n <= HEAP_MAX_OBJECTS, "%u objects", h->n);
	FUZZ_CHECK(h->n == 0 || heap_ref_start(h, 0) == 0, "refs do not start at 0");
	for (uint32_t i = 0; i < h->n; i++) {
		FUZZ_CHECK(i == 0 || heap_id(h, i - 1) < heap_id(h, i),
			   "ids not strictly ascending at %u", i);
		FUZZ_CHECK(heap_find(h, heap_id(h, i)) == i, "heap_find(%u)", i);
		FUZZ_CHECK(heap_ref_start(h, i) <= heap_ref_start(h, i + 1),
			   "ref ranges overlap at %u", i);
		FUZZ_CHECK(h->cls[i] == HEAP_NO_CLASS ||
			   h->cls[i] < h->n_classes, "class index of %u", i);
		FUZZ_CHECK(heap_class_name(h, i, buf), "class name of %u", i);
		FUZZ_CHECK(!__builtin_add_overflow(bytes, heap_size(h, i), &bytes),
			   "the dump's bytes overflow 64 bits");
		heap_generation(h, i);
	}
	for (uint64_t e = 0; e < refs; e++) {
		uint32_t to = h->ref[e];

		FUZZ_CHECK(is_object(h, to) || to == HEAP_NULL_REF ||
			   to == HEAP_DANGLING_REF, "ref %llu points at %u",
			   (unsigned long long)e, to);
		nonnull += to != HEAP_NULL_REF;
	}
	FUZZ_CHECK(bytes == h->total_bytes, "total bytes %llu, objects sum "
		   "to %llu", (unsigned long long)h->total_bytes,
		   (unsigned long long)bytes);
	FUZZ_CHECK(nonnull == h->n_references, "%llu references counted, "
		   "%llu there", (unsigned long long)h->n_references,
		   (unsigned long long)nonnull);
	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t o = h->roots[r].object;

		FUZZ_CHECK(o == HEAP_NONE || is_object(h, o), "root %zu", r);
		FUZZ_CHECK(o == HEAP_NONE || heap_id(h, o) == h->roots[r].ref,
			   "root %zu on the wrong object", r);
	}
}

/* ---- the slow way, for small dumps --------------------------------------- */

typedef uint64_t set; /* of object indexes, n <= NAIVE_MAX */

static bool in(set s, uint32_t i)
{
	return s >> i & 1;
}

/* What the roots reach without passing through `without` (NAIVE_MAX for
 * none), over the references followed at `level`. Weak roots count as
 * starting points only when `weak` is set. */
static set reach(const struct heap *h, uint32_t without, bool weak,
		 enum heap_level level)
{
	uint32_t queue[NAIVE_MAX];
	size_t head = 0, tail = 0;
	set seen = 0;

	for (size_t r = 0; r < h->n_roots; r++) {
		uint32_t o = h->roots[r].object;

		if (!is_object(h, o) || o == without || in(seen, o) ||
		    (heap_root_is_weak(&h->roots[r]) && !weak))
			continue;
		seen |= (set)1 << o;
		queue[tail++] = o;
	}
	while (head < tail) {
		uint32_t u = queue[head++];

		for (uint64_t e = heap_ref_start(h, u); e < heap_ref_start(h, u + 1);
		     e++) {
			uint32_t v = h->ref[e];

			if (!is_object(h, v) || v == without || in(seen, v) ||
			    !heap_follows(h, level, u, e))
				continue;
			seen |= (set)1 << v;
			queue[tail++] = v;
		}
	}
	return seen;
}

static int popcount(set s)
{
	return __builtin_popcountll(s);
}

/* dominated[x]: the objects that every root path to passes through x (x
 * itself included when reachable). */
static void naive_dominated(const struct heap *h, set reachable,
			    enum heap_level level, set *dominated)
{
	bool weak = level >= HEAP_LEVEL_WEAK;

	for (uint32_t x = 0; x < h->n; x++)
		dominated[x] = in(reachable, x) ?
			reachable & ~reach(h, x, weak, level) : 0;
}

static uint32_t naive_idom(const struct heap *h, const set *dominated,
			   uint32_t y)
{
	uint32_t best = HEAP_VIRTUAL_ROOT;
	int best_depth = -1;

	/* the strict dominators form a chain: the nearest has the most of
	 * them above it */
	for (uint32_t x = 0; x < h->n; x++) {
		int depth = 0;

		if (x == y || !in(dominated[x], y))
			continue;
		for (uint32_t z = 0; z < h->n; z++)
			depth += z != x && in(dominated[z], x);
		if (depth > best_depth) {
			best_depth = depth;
			best = x;
		}
	}
	return best;
}

static void check_dominators_naively(const struct heap *h,
				     const struct heap_dominators *d)
{
	bool weak = d->level >= HEAP_LEVEL_WEAK;
	set dominated[NAIVE_MAX];
	set reachable = reach(h, NAIVE_MAX, weak, d->level);
	set weakly = reach(h, NAIVE_MAX, true, d->level) & ~reachable;
	uint64_t lost_bytes = 0;

	naive_dominated(h, reachable, d->level, dominated);
	FUZZ_CHECK(d->reachable == (uint64_t)popcount(reachable),
		   "%llu reachable, %d by definition",
		   (unsigned long long)d->reachable, popcount(reachable));
	FUZZ_CHECK(d->weakly_reachable == (uint64_t)popcount(weakly),
		   "%llu weakly reachable, %d by definition",
		   (unsigned long long)d->weakly_reachable, popcount(weakly));
	for (uint32_t y = 0; y < h->n; y++) {
		uint64_t retained = 0;

		if (!in(reachable, y)) {
			FUZZ_CHECK(d->idom[y] == HEAP_NONE,
				   "unreachable %u has a dominator", y);
			lost_bytes += heap_size(h, y);
			continue;
		}
		FUZZ_CHECK(d->idom[y] == naive_idom(h, dominated, y),
			   "idom of %u is %u, by definition %u", y, d->idom[y],
			   naive_idom(h, dominated, y));
		for (uint32_t z = 0; z < h->n; z++)
			if (in(dominated[y], z))
				retained += heap_size(h, z);
		FUZZ_CHECK(d->retained[y] == retained,
			   "retained of %u is %llu, by definition %llu", y,
			   (unsigned long long)d->retained[y],
			   (unsigned long long)retained);
	}
	FUZZ_CHECK(d->unreachable_bytes == lost_bytes,
		   "unreachable bytes %llu, by definition %llu",
		   (unsigned long long)d->unreachable_bytes,
		   (unsigned long long)lost_bytes);
}

/* ---- threads ------------------------------------------------------------- */

/* Each root listed once, in a frame or thread range that lies inside the
 * lists; a thread retains its parts, at most the dump, and no more than
 * the one before it. */
static void check_threads(const struct heap *h, const struct heap_dominators *d)
{
	struct heap_threads t;
	struct ht_error err;
	size_t listed = 0;

	if (heap_threads(h, d, &t, &err) < 0) {
		fuzz_check_error(&err, "heap_threads");
		return;
	}
	for (size_t i = 0; i < t.n_roots; i++)
		FUZZ_CHECK(t.roots[i] < h->n_roots, "thread root %zu is %zu",
			   i, t.roots[i]);
	for (size_t i = 0; i < t.n_threads; i++) {
		const struct thread_view *v = &t.threads[i];

		FUZZ_CHECK(v->retained == v->object_retained +
			   v->locals_retained && v->retained <= h->total_bytes,
			   "thread %zu retains %llu", i,
			   (unsigned long long)v->retained);
		FUZZ_CHECK(i == 0 || t.threads[i - 1].retained >= v->retained,
			   "thread %zu is out of order", i);
		FUZZ_CHECK(v->first_frame + v->n_frames <= t.n_frames &&
			   v->first_own + v->n_own <= t.n_roots,
			   "thread %zu's ranges", i);
		listed += v->n_own;
		for (size_t f = 0; f < v->n_frames &&
		     v->first_frame + v->n_frames <= t.n_frames; f++) {
			const struct thread_frame *fr =
				&t.frames[v->first_frame + f];

			FUZZ_CHECK(fr->first + fr->n <= t.n_roots,
				   "frame %zu's roots", f);
			listed += fr->n;
		}
	}
	FUZZ_CHECK(listed == t.n_roots, "%zu of %zu thread roots listed",
		   listed, t.n_roots);
	heap_threads_free(&t);
}

static void check_dominators(const struct heap *h, enum heap_level level)
{
	struct heap_dominators d;
	struct ht_error err;
	uint64_t reachable = 0;

	if (heap_dominators_at(h, level, &d, &err) < 0) {
		fuzz_check_error(&err, "heap_dominators");
		return;
	}
	for (uint32_t y = 0; y < h->n; y++) {
		uint32_t p = d.idom[y];

		if (p == HEAP_NONE) {
			FUZZ_CHECK(d.retained[y] == 0, "unreachable %u retains", y);
			continue;
		}
		reachable++;
		FUZZ_CHECK(p == HEAP_VIRTUAL_ROOT ||
			   (is_object(h, p) && p != y &&
			    d.idom[p] != HEAP_NONE), "idom of %u is %u", y, p);
		FUZZ_CHECK(d.retained[y] >= heap_size(h, y),
			   "%u retains %llu, less than its own %llu bytes", y,
			   (unsigned long long)d.retained[y],
			   (unsigned long long)heap_size(h, y));
	}
	FUZZ_CHECK(reachable == d.reachable && d.reachable + d.unreachable ==
		   h->n, "%llu reachable + %llu unreachable of %u objects",
		   (unsigned long long)d.reachable,
		   (unsigned long long)d.unreachable, h->n);
	if (small(h))
		check_dominators_naively(h, &d);
	if (level == HEAP_LEVEL_DEFAULT)
		check_threads(h, &d);
	heap_dominators_free(&d);
}

/* ---- paths --------------------------------------------------------------- */

/* References on a shortest chain from `from` to `to`, UINT32_MAX when
 * there is none: a forward search (small dumps). */
static uint32_t distance(const struct heap *h, enum heap_level level,
			 uint32_t from, uint32_t to)
{
	uint32_t *dist = malloc((size_t)h->n * sizeof(*dist));
	uint32_t *queue = malloc((size_t)h->n * sizeof(*queue));
	size_t head = 0, tail = 0;
	uint32_t found = UINT32_MAX;

	FUZZ_CHECK(dist && queue, "out of memory");
	memset(dist, 0xff, (size_t)h->n * sizeof(*dist));
	dist[from] = 0;
	queue[tail++] = from;
	while (head < tail) {
		uint32_t u = queue[head++];

		if (u == to) {
			found = dist[u];
			break;
		}
		for (uint64_t e = heap_ref_start(h, u); e < heap_ref_start(h, u + 1);
		     e++) {
			uint32_t v = h->ref[e];

			if (is_object(h, v) && dist[v] == UINT32_MAX &&
			    heap_follows(h, level, u, e)) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
	free(dist);
	free(queue);
	return found;
}

static bool root_counts(const struct heap *h, size_t r,
			enum heap_level level)
{
	return is_object(h, h->roots[r].object) &&
	       heap_root_counts(&h->roots[r], level);
}

static void check_path(const struct heap *h, uint32_t target,
		       const struct heap_path *p, enum heap_level level)
{
	FUZZ_CHECK(p->root < h->n_roots && root_counts(h, p->root, level),
		   "path from root %zu", p->root);
	FUZZ_CHECK(p->length >= 1 && p->objects[0] == h->roots[p->root].object
		   && p->objects[p->length - 1] == target,
		   "path does not run from its root to the target");
	for (size_t i = 0; i + 1 < p->length; i++) {
		uint32_t u = p->objects[i], v = p->objects[i + 1];
		uint64_t first = heap_ref_start(h, u);

		FUZZ_CHECK(is_object(h, u) && p->fields[i] <
			   heap_ref_start(h, u + 1) - first &&
			   h->ref[first + p->fields[i]] == v &&
			   heap_follows(h, level, u, first + p->fields[i]),
			   "step %zu of a path is no reference", i);
		for (uint32_t f = 0; f < p->fields[i]; f++)
			FUZZ_CHECK(h->ref[first + f] != v ||
				   !heap_follows(h, level, u, first + f),
				   "step %zu names a later field", i);
	}
}

static void check_paths_to(const struct heap *h, uint32_t target,
			   enum heap_level level)
{
	struct heap_path *paths;
	struct ht_error err;
	size_t expected = 0;
	long n = heap_paths(h, target, PATHS_MAX, level, &paths, &err);

	if (n < 0) {
		fuzz_check_error(&err, "heap_paths");
		return;
	}
	for (size_t r = 0; r < h->n_roots && small(h); r++)
		expected += root_counts(h, r, level) &&
			    distance(h, level, h->roots[r].object, target) !=
				    UINT32_MAX;
	if (small(h))
		FUZZ_CHECK((size_t)n == (expected < PATHS_MAX ? expected :
							       PATHS_MAX),
			   "%ld paths to %u, %zu roots reach it", n, target,
			   expected);
	for (long i = 0; i < n; i++) {
		check_path(h, target, &paths[i], level);
		FUZZ_CHECK(i == 0 || paths[i - 1].length <= paths[i].length,
			   "paths not shortest first");
		if (small(h))
			FUZZ_CHECK(paths[i].length - 1 ==
				   distance(h, level, paths[i].objects[0], target),
				   "path %ld is not a shortest one", i);
	}
	heap_paths_free(paths, (size_t)n);
}

/* ---- collections and labels ------------------------------------------- */

/* Whatever the fields hold, a collection's figures stay within what they
 * are made of, and a label fits its buffer. */
static void check_collections(const struct heap *h)
{
	char label[LABEL_BOUND];

	for (uint32_t i = 0; i < h->n; i++) {
		struct collection c;
		const char *l = object_label(h, i, label);
		bool is = collection_of(h, i, &c);

		FUZZ_CHECK(!l || strlen(l) < LABEL_BOUND, "a label too long");
		if (!is)
			continue;
		FUZZ_CHECK(l != NULL, "a collection without a label");
		FUZZ_CHECK(c.kind != NULL, "a collection of no kind");
		FUZZ_CHECK(c.array == HEAP_NONE || c.array < h->n,
			   "a backing array out of the dump");
		FUZZ_CHECK(c.wasted <= c.array_bytes,
			   "more wasted than the arrays weigh");
		FUZZ_CHECK(c.wasted == 0 || (c.has_size && c.has_capacity &&
					     c.size < c.capacity),
			   "waste without a known size under capacity");
	}
}

/* ---- waste --------------------------------------------------------------- */

static void check_duplicates(const struct waste_duplicates *d)
{
	uint64_t objects = 0, copies = 0, wasted = 0;

	for (size_t i = 0; i < d->n_groups; i++) {
		const struct waste_group *g = &d->groups[i];

		FUZZ_CHECK(g->count >= 2 && g->arrays >= 1 &&
			   g->arrays <= g->count && g->wasted <= g->bytes,
			   "waste group %zu: %llu objects, %llu arrays", i,
			   (unsigned long long)g->count,
			   (unsigned long long)g->arrays);
		FUZZ_CHECK(i == 0 || d->groups[i - 1].wasted >= g->wasted,
			   "waste groups out of order");
		objects += g->count;
		copies += g->count - 1;
		wasted += g->wasted;
	}
	FUZZ_CHECK(objects == d->objects && copies == d->copies &&
		   wasted == d->wasted && objects <= d->examined,
		   "waste totals do not add up");
}

/* Duplicates and collections of any dump with values: the totals add
 * up, and the holders of every group are found. */
static void check_waste(const struct heap *h)
{
	struct ht_error err;
	struct waste w;
	const struct waste_collection_row *a;

	if (waste_compute(h, &w, &err) < 0) {
		fuzz_check_error(&err, "waste_compute");
		return;
	}
	FUZZ_CHECK(w.has_values == (h->has_values != NULL),
		   "waste says the dump has values when it has none");
	check_duplicates(&w.strings);
	check_duplicates(&w.arrays);
	a = &w.collections.all;
	FUZZ_CHECK(a->unknown + a->empty + a->sparse <= a->count,
		   "more empty and sparse collections than collections");
	if (waste_find_holders(h, &w, &w.strings, w.strings.n_groups, 3,
			       &err) < 0 ||
	    waste_find_holders(h, &w, &w.arrays, w.arrays.n_groups, 3,
			       &err) < 0)
		fuzz_check_error(&err, "waste_find_holders");
	waste_free(&w);
}

static int on_heap(void *ctx, struct heap *h, bool *keep)
{
	(void)ctx;
	(void)keep;
	check_graph(h);
	check_collections(h);
	check_waste(h);
	for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
		check_dominators(h, (enum heap_level)l);
	if (h->n == 0)
		return 0;
	check_paths_to(h, 0, HEAP_LEVEL_PHANTOM);
	check_paths_to(h, h->n - 1, HEAP_LEVEL_STRONG);
	check_paths_to(h, h->n / 2, HEAP_LEVEL_WEAK);
	return 0;
}

static void analyse(const uint8_t *data, size_t size, enum fuzz_form form)
{
	struct heap_scan_report report;
	struct ht_error err;
	struct ht_reader *r;
	int rc;

	r = fuzz_reader(data, size, form, FUZZ_SEEKABLE, &err);
	if (!r)
		return;
	/* with values: labels, collections and waste read them */
	rc = heap_scan_with(r, HEAP_ALL_DUMPS,
			    &(struct heap_scan_options){.values = true},
			    on_heap, NULL, &report, &err);
	FUZZ_CHECK(rc == 0 || rc == -1, "heap_scan returned %d", rc);
	if (rc < 0)
		fuzz_check_error(&err, "heap_scan");
	ht_reader_close(r);
}

/* ---- relocation and history --------------------------------------------- */

/* Replays the input through t (and v); false when the tracker stopped,
 * which it may do only for a reason it gives. */
static bool track(const uint8_t *data, size_t size, enum fuzz_form form,
		  struct reloc *t, struct rref_naive *v)
{
	struct ht_replay_callbacks cb = rref_pair_callbacks();
	struct rref_pair p = {t, v, 0};
	struct ht_error err;
	struct ht_reader *r;
	int rc;

	r = fuzz_reader(data, size, form, FUZZ_SEEKABLE, &err);
	FUZZ_CHECK(r, "the input opened once, not twice");
	rc = ht_replay(r, &cb, &p, NULL, &err);
	ht_reader_close(r);
	if (reloc_error(t)[0])
		return false;
	FUZZ_CHECK(rc == 0 || rc == -1, "ht_replay returned %d", rc);
	if (v)
		rref_naive_finish(v);
	if (reloc_finish(t) != 0) {
		FUZZ_CHECK(reloc_error(t)[0], "the tracker stopped silently");
		return false;
	}
	return true;
}

static bool same_step(const struct reloc_step *a, const struct reloc_step *b)
{
	return a->kind == b->kind && a->cause == b->cause &&
	       a->object == b->object && a->event_index == b->event_index &&
	       a->gc == b->gc && a->dump == b->dump && a->from == b->from &&
	       a->to == b->to && a->generation == b->generation &&
	       a->old_generation == b->old_generation &&
	       a->class_id == b->class_id && a->size == b->size &&
	       a->first == b->first && a->alive_gc == b->alive_gc &&
	       a->other == b->other && a->other_class == b->other_class &&
	       a->other_size == b->other_size && a->stack == b->stack;
}

/* What a pass watches: the objects that hold an id (history's first
 * pass), or those allocated with a stack (sites). */
struct watching {
	bool sampled;
	ht_id id;
};

/* A step from which on watching must show the object: it comes to the
 * watched id, or it is an allocation with a stack. */
static bool arrives_at(const struct reloc_step *s, const struct watching *w)
{
	if (w->sampled)
		return s->kind == RELOC_ALLOCATED && s->stack;
	return s->to == w->id &&
	       (s->kind == RELOC_ALLOCATED || s->kind == RELOC_MOVED ||
		(s->kind == RELOC_SEEN && s->first));
}

struct id_steps {
	struct reloc_step step[RREF_MAX_STEPS];
	size_t n;
	bool too_many;
};

static void note_step(void *ctx, const struct reloc_step *s)
{
	struct id_steps *w = ctx;

	if (w->n == RREF_MAX_STEPS)
		w->too_many = true;
	else
		w->step[w->n++] = *s;
}

/* Each allocation with a stack is watched from its allocated step, which
 * says the stack the event gave, in the input's order. */
static void check_allocation_stacks(const struct id_steps *w)
{
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++) {
		if (w->step[i].kind != RELOC_ALLOCATED)
			continue;
		FUZZ_CHECK(k < allocation_stacks.n, "an allocated step (object "
			   "%u) with no allocation with a stack left",
			   w->step[i].object);
		FUZZ_CHECK(w->step[i].stack == allocation_stacks.stack[k],
			   "object %u allocated with stack %llu, the event "
			   "said %llu", w->step[i].object,
			   (unsigned long long)w->step[i].stack,
			   (unsigned long long)allocation_stacks.stack[k]);
		k++;
	}
	FUZZ_CHECK(k == allocation_stacks.n, "%zu allocations with a stack, "
		   "%zu watched from their allocation", allocation_stacks.n, k);
}

/* History's first pass watches an id, sites every allocation with a
 * stack; each step such a pass reports must be one that watching every
 * object reports too, in the same order, and none that brings an object
 * under watch may be missing. Every object is watched up to
 * RREF_MAX_OBJECTS. */
static void check_watching(const uint8_t *data, size_t size,
			   enum fuzz_form form, bool reports,
			   const struct rref_outcome *all,
			   const struct watching *what)
{
	static struct id_steps w;
	struct reloc_hooks hooks = {&w, NULL, NULL, note_step};
	struct reloc *t = reloc_new(reports, &hooks);
	const char *name = what->sampled ? "allocations with a stack" : "an id";
	size_t k = 0;

	FUZZ_CHECK(t, "out of memory");
	w.n = 0;
	w.too_many = false;
	if (what->sampled)
		reloc_watch_sampled(t);
	else
		reloc_watch_id(t, what->id);
	if (!track(data, size, form, t, NULL) || w.too_many) {
		reloc_free(t);
		return;
	}
	for (size_t i = 0; i < w.n; i++) {
		if (w.step[i].object >= RREF_MAX_OBJECTS)
			continue;
		while (k < all->n_steps && !same_step(&all->steps[k],
						      &w.step[i]))
			k++;
		FUZZ_CHECK(k < all->n_steps, "watching %s (0x%llx): step %zu "
			   "(kind %d of object %u) is not among the steps of "
			   "every object", name, (unsigned long long)what->id,
			   i, w.step[i].kind, w.step[i].object);
		k++;
	}
	for (size_t j = 0; j < all->n_steps; j++) {
		bool found = false;

		if (!arrives_at(&all->steps[j], what))
			continue;
		for (size_t i = 0; i < w.n && !found; i++)
			found = same_step(&all->steps[j], &w.step[i]);
		FUZZ_CHECK(found, "watching %s (0x%llx): object %u arrives "
			   "(step kind %d) unseen", name,
			   (unsigned long long)what->id, all->steps[j].object,
			   all->steps[j].kind);
	}
	if (what->sampled && !allocation_stacks.too_many)
		check_allocation_stacks(&w);
	reloc_free(t);
}

static bool reports_survivors(const uint8_t *data, size_t size,
			      enum fuzz_form form, bool *reports)
{
	struct ht_error err;
	struct ht_reader *r = fuzz_reader(data, size, form, FUZZ_SEEKABLE,
					  &err);

	if (!r)
		return false;
	*reports = ht_reader_header(r)->reports_survivors;
	ht_reader_close(r);
	return true;
}

static void check_relocation(const uint8_t *data, size_t size,
			     enum fuzz_form form)
{
	static struct rref_outcome all;
	struct reloc_hooks hooks = rref_outcome_hooks(&all);
	struct reloc_totals totals;
	struct rref_naive *v;
	struct reloc *t;
	char why[256];
	const char *diff;
	bool reports;

	if (!reports_survivors(data, size, form, &reports))
		return;
	memset(&all, 0, sizeof(all));
	v = rref_naive_new(reports);
	t = reloc_new(reports, &hooks);
	FUZZ_CHECK(v && t, "out of memory");
	for (uint32_t i = 0; i < RREF_MAX_OBJECTS; i++)
		FUZZ_CHECK(reloc_watch_object(t, i) == 0, "out of memory");
	if (!track(data, size, form, t, v))
		goto out;
	reloc_get_totals(t, &totals);
	FUZZ_CHECK(totals.objects == totals.alive + totals.died + totals.lost,
		   "%llu objects tracked: %llu alive, %llu died, %llu lost",
		   (unsigned long long)totals.objects,
		   (unsigned long long)totals.alive,
		   (unsigned long long)totals.died,
		   (unsigned long long)totals.lost);
	all.totals = totals;
	if (!rref_too_big(&all, v)) {
		diff = rref_compare(&all, v, why, sizeof(why));
		FUZZ_CHECK(!diff, "relocation, against the naive reference: %s",
			   diff);
	}
	if (all.n_steps && all.n_steps < RREF_MAX_STEPS) {
		struct watching sampled = {.sampled = true};

		check_watching(data, size, form, reports, &all,
			       &(struct watching){.id = all.steps[0].to});
		for (size_t j = 0; j < all.n_steps; j++)
			if (all.steps[j].kind == RELOC_MOVED) {
				check_watching(data, size, form, reports, &all,
					       &(struct watching){
						       .id = all.steps[j].from});
				break;
			}
		check_watching(data, size, form, reports, &all, &sampled);
	}
out:
	reloc_free(t);
	rref_naive_free(v);
}

void fuzz_replay_and_analyse(const uint8_t *data, size_t size,
			     enum fuzz_form form)
{
	replay(data, size, form);
	analyse(data, size, form);
	check_relocation(data, size, form);
}
