/*
 * bench_analysis.c - what analyzing a big dump costs: the wall time to
 * build its graph (heap_scan) and its dominators and retained sizes
 * (heap_dominators), and the peak resident memory per object, against the
 * budget of doc/design.md section 3: 10M objects of 3 refs in under 100 bytes
 * an object and 10 seconds.
 *
 * The dump is made up as it is read, by a source that yields its events
 * one at a time, so the generator holds no memory of its own: ids grow as
 * a bump allocator would lay objects out (and are computable from the
 * object's number); each object has three ref slots, one to an object a
 * few further on, one to an object within a thousand either way, one to
 * anywhere (null three times in ten); 2000 thread roots spread over the
 * heap. With --shuffled the objects come in a scrambled order, as a
 * depth-first heap walk gives them, which takes the sorting path. With
 * --fields each class declares three fields and every reference names the
 * one it is read from, as a format version 2 recorder's do, so that the
 * cost of keeping the fields shows beside the figures without.
 *
 * Usage: bench_analysis [OBJECTS] [--shuffled] [--fields]
 * Exits 1 when the peak passes the memory budget.
 */
#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "lib/read/source.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BUDGET_BYTES_PER_OBJECT 100.0
#define BUDGET_SECONDS 10.0
#define ROOTS 2000
#define CLASSES 200
#define BASE 0x10000000ULL
#define STRIDE 40

/* ---- The made-up dump --------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	return x ^ (x >> 33);
}

/* Object j's id: STRIDE apart, jittered by up to 24 bytes, still rising. */
static ht_id id_of(uint64_t j)
{
	return BASE + STRIDE * j + 8 * (mix(j) % 4);
}

#define FIELDS_PER_CLASS 3

enum phase { P_CLASSES, P_FIELDS, P_BEGIN, P_THREAD, P_ROOTS, P_HEAP, P_OBJECTS,
	     P_END, P_DONE };

struct gen {
	uint64_t n;
	bool shuffled;
	bool fields;
	ht_id ref_fields[3];
	struct ht_field declared[FIELDS_PER_CLASS];
	uint64_t step;        /* shuffled: a stride prime to n */
	enum phase phase;
	uint64_t at;          /* within the phase */
	uint64_t events;
	ht_id refs[ROOTS];
	uint32_t flags[ROOTS];
	char name[32];
	struct ht_header header;
};

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The k-th object reported: itself, or scrambled by a stride. */
static uint64_t object_at(const struct gen *g, uint64_t k)
{
	return g->shuffled ? (k * g->step) % g->n : k;
}

/* Class c's k-th field: small dense numbers, as recorders choose them. */
static ht_id field_of(uint64_t c, unsigned k)
{
	return c * FIELDS_PER_CLASS + k + 1;
}

static void fields_event(struct gen *g, uint64_t c, struct ht_event *ev)
{
	static const char *const names[FIELDS_PER_CLASS] = {"next", "value",
							    "owner"};

	for (unsigned k = 0; k < FIELDS_PER_CLASS; k++)
		g->declared[k] = (struct ht_field){
			.id = field_of(c, k),
			.class_id = 0x1000 + 8 * c,
			.name = names[k],
			.kind = HT_FIELD_INSTANCE,
		};
	ev->type = HT_EV_FIELDS;
	ev->u.fields = (struct ht_ev_fields){
		.count = FIELDS_PER_CLASS, .fields = g->declared};
}

static void object_event(struct gen *g, uint64_t j, struct ht_event *ev)
{
	uint64_t h = mix(j ^ 0x5bd1e995);
	uint64_t near = j + 1 + h % 8;
	int64_t around = (int64_t)j + (int64_t)(h >> 8) % 2001 - 1000;

	g->refs[0] = near < g->n ? id_of(near) : 0;
	g->refs[1] = around >= 0 && (uint64_t)around < g->n ?
		     id_of((uint64_t)around) : 0;
	g->refs[2] = (h >> 24) % 10 < 7 ? id_of((h >> 32) % g->n) : 0;
	ev->type = HT_EV_OBJECT_REFERENCES;
	ev->u.object_references = (struct ht_ev_object_references){
		.id = id_of(j),
		.class_id = 0x1000 + 8 * (h % CLASSES),
		.size = id_of(j + 1) - id_of(j),
		.count = 3,
		.refs = g->refs,
	};
	if (g->fields) {
		for (unsigned k = 0; k < 3; k++)
			g->ref_fields[k] = field_of(h % CLASSES, k);
		ev->u.object_references.ref_fields = g->ref_fields;
	}
}

static void container_event(struct ht_event *ev, enum ht_container_type t,
			    ht_id id1)
{
	ev->type = HT_EV_BEGIN_CONTAINER;
	ev->u.begin_container = (struct ht_ev_begin_container){
		.type = t, .id1 = id1};
}

static int gen_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct gen *g = self;

	(void)err;
	memset(ev, 0, sizeof(*ev));
	switch (g->phase) {
	case P_CLASSES:
		snprintf(g->name, sizeof(g->name), "Class%" PRIu64, g->at);
		ev->type = HT_EV_CLASS;
		ev->u.class_ = (struct ht_ev_class){
			.id = 0x1000 + 8 * g->at, .name = g->name};
		if (++g->at == CLASSES) {
			g->phase = g->fields ? P_FIELDS : P_BEGIN;
			g->at = 0;
		}
		break;
	case P_FIELDS:
		fields_event(g, g->at, ev);
		if (++g->at == CLASSES) {
			g->phase = P_BEGIN;
			g->at = 0;
		}
		break;
	case P_BEGIN:
		container_event(ev, HT_C_BEGIN, 0);
		g->phase = P_THREAD;
		break;
	case P_THREAD:
		container_event(ev, HT_C_RT_THREAD, 1);
		g->phase = P_ROOTS;
		break;
	case P_ROOTS:
		for (size_t i = 0; i < ROOTS; i++)
			g->refs[i] = id_of(mix(i) % g->n);
		ev->type = HT_EV_ROOT_REFERENCES;
		ev->u.root_references = (struct ht_ev_root_references){
			.count = ROOTS, .refs = g->refs, .flags = g->flags};
		g->phase = P_HEAP;
		break;
	case P_HEAP:
		container_event(ev, HT_C_HEAP, 0);
		g->phase = P_OBJECTS;
		break;
	case P_OBJECTS:
		object_event(g, object_at(g, g->at), ev);
		if (++g->at == g->n)
			g->phase = P_END;
		break;
	case P_END:
		container_event(ev, HT_C_END, 0);
		g->phase = P_DONE;
		break;
	case P_DONE:
		return 0;
	}
	g->events++;
	return 1;
}

static struct ht_position gen_position(const void *self)
{
	const struct gen *g = self;

	return (struct ht_position){.event_index = g->events};
}

static const struct ht_source_ops gen_ops = {
	.format = "generated",
	.next = gen_next,
	.position = gen_position,
};

/* ---- Measuring ---------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_bytes(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss * 1024.0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* What the graph's edge fields take: a bit an object, the layouts and
 * the objects off them. */
static double field_bytes(const struct heap *h)
{
	if (!h->field_follows)
		return 0.0;
	return (double)((h->n + 63) / 64 * 8) +
	       (double)(h->n_classes + 2) * sizeof(*h->layout_start) +
	       (double)h->layout_start[h->n_classes + 1] * sizeof(*h->layout) +
	       (double)h->n_odd * (sizeof(*h->odd) + sizeof(*h->odd_start)) +
	       (double)h->odd_start[h->n_odd] * sizeof(*h->odd_field);
}

/* What the graph's per-object and per-edge arrays take, fields included. */
static double graph_bytes(const struct heap *h)
{
	double per_object = sizeof(*h->id) + sizeof(*h->cls) +
			    sizeof(*h->size) +
			    (h->ref_start32 ? sizeof(*h->ref_start32) :
					      sizeof(*h->ref_start)) +
			    (h->generation ? 1 : 0);

	return per_object * h->n +
	       (double)heap_ref_start(h, h->n) * sizeof(*h->ref) + field_bytes(h);
}

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	*(struct heap **)ctx = h;
	*keep = true;
	return 0;
}

int main(int argc, char **argv)
{
	struct gen *g = calloc(1, sizeof(*g));
	struct ht_reader r = {.ops = &gen_ops, .self = g};
	struct heap *h = NULL;
	struct heap_dominators d;
	struct ht_error err;
	double t0, t1, t2, c0, c1, c2, base_rss, per_object;

	if (!g)
		return 2;
	g->n = 10000000;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--shuffled") == 0)
			g->shuffled = true;
		else if (strcmp(argv[i], "--fields") == 0)
			g->fields = true;
		else
			g->n = strtoull(argv[i], NULL, 0);
	}
	if (g->n < 2) {
		fprintf(stderr, "usage: %s [OBJECTS >= 2] [--shuffled] "
			"[--fields]\n",
			argv[0]);
		return 2;
	}
	for (g->step = g->n / 2 + 1; gcd(g->step, g->n) != 1; g->step++)
		;
	r.header = &g->header;
	base_rss = peak_rss_bytes();

	t0 = now();
	c0 = cpu_seconds();
	if (heap_scan(&r, HEAP_LAST_DUMP, keep_dump, &h, NULL, &err) != 0 ||
	    !h) {
		fprintf(stderr, "bench_analysis: %s\n", err.message);
		return 2;
	}
	t1 = now();
	c1 = cpu_seconds();
	if (heap_dominators(h, &d, &err) != 0) {
		fprintf(stderr, "bench_analysis: %s\n", err.message);
		return 2;
	}
	t2 = now();
	c2 = cpu_seconds();

	per_object = peak_rss_bytes() / (double)g->n;
	printf("objects              %" PRIu32 " (%s order%s)\n", h->n,
	       g->shuffled ? "scrambled" : "address",
	       g->fields ? ", fields" : "");
	printf("graph                %.1f bytes/object (fields: %.1f)\n",
	       graph_bytes(h) / (double)g->n,
	       field_bytes(h) / (double)g->n);
	printf("references           %" PRIu64 " (%" PRIu64 " dangling)\n",
	       h->n_references, h->n_dangling);
	printf("reachable            %" PRIu64 "\n", d.reachable);
	printf("load                 %.2f s (cpu %.2f s)\n", t1 - t0, c1 - c0);
	printf("dominators+retained  %.2f s (cpu %.2f s)\n", t2 - t1, c2 - c1);
	printf("total                %.2f s (cpu %.2f s; budget %.0f s)\n",
	       t2 - t0, c2 - c0, BUDGET_SECONDS);
	printf("peak RSS             %.1f MiB, %.1f bytes/object "
	       "(%.1f before loading; budget %.0f)\n",
	       peak_rss_bytes() / 1048576.0, per_object,
	       base_rss / (double)g->n, BUDGET_BYTES_PER_OBJECT);
	heap_dominators_free(&d);
	heap_free(h);
	free(g);
	if (t2 - t0 > BUDGET_SECONDS)
		printf("warning: over the time budget\n");
	if (per_object >= BUDGET_BYTES_PER_OBJECT) {
		printf("FAIL: over the memory budget\n");
		return 1;
	}
	return 0;
}
