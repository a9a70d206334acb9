/*
 * genheap_record.c - ht-genheap's roots (threads and their frames, class
 * statics, the VM's own tables, the orphans hung off them) and the
 * recording through the shim: the classes, fields, methods and threads,
 * then each dump of the growing heap, its roots and a depth-first heap
 * walk from them, as a runtime's heap walker would report it.
 */
#include "tools/genheap_internal.h"

#include <inttypes.h>
#include <sys/stat.h>

/* ---- Roots --------------------------------------------------------------- */

static struct root_set *add_container(struct roots *rs,
				      enum ht_container_type type, ht_id id1,
				      ht_id id2)
{
	struct root_set *s;

	XGROW(rs->v, rs->n + 1, rs->cap);
	s = &rs->v[rs->n++];
	memset(s, 0, sizeof(*s));
	s->type = type;
	s->id1 = id1;
	s->id2 = id2;
	return s;
}

/* Locals mostly hold what the thread allocated lately. */
static uint32_t local_target(const struct heap *h, struct rng *r)
{
	size_t recent = h->n / 20 + 1;

	if (rng_chance(r, 0.6))
		return live_from(h, h->n - 1 - rng_below(r, recent));
	return live_from(h, rng_below(r, h->n));
}

static enum ht_container_type frame_type(struct rng *r)
{
	double u = rng_unit(r);

	if (u < 0.85)
		return HT_C_RT_JIT;
	return u < 0.93 ? HT_C_RT_NATIVE : HT_C_RT_INTERNALFRAME;
}

/* Each thread: its container (rooting its Thread object), then its frames
 * from the top of the stack down, each with a few locals. */
static void plan_thread_roots(struct roots *rs, const struct heap *h,
			      struct rng *r)
{
	for (unsigned t = 0; t < N_THREADS; t++) {
		size_t frames = 4 + rng_below(r, 36);
		ht_id sp = STACK_BASE + t * THREAD_STACK_SPAN;

		struct root_set *thread =
			add_container(rs, HT_C_RT_THREAD, t + 1, 0);

		if (h->threads[t])
			list_push(&thread->refs, h->threads[t]);
		for (size_t f = 0; f < frames; f++) {
			enum ht_container_type type = frame_type(r);
			ht_id method = type == HT_C_RT_INTERNALFRAME ? 0 :
				method_id(rng_skewed(r, N_METHODS));
			struct root_set *s;
			size_t locals = rng_geometric(r, 1.5);

			sp += 0x40 + 0x10 * rng_below(r, 16);
			s = add_container(rs, type, sp, method);
			for (size_t k = 0; k < locals; k++)
				list_push(&s->refs, local_target(h, r));
		}
	}
}

/* Statics of a third of the classes: popular objects and caches. */
static void plan_static_roots(struct roots *rs, const struct heap *h,
			      const struct catalogue *cat, struct rng *r)
{
	for (size_t c = 0; c < cat->instances.n; c++) {
		struct root_set *s;
		size_t n;

		if (!rng_chance(r, 0.35))
			continue;
		s = add_container(rs, HT_C_RT_CLASS,
				  class_id(cat->instances.cls[c]), 0);
		n = 1 + rng_below(r, 4);
		for (size_t k = 0; k < n; k++)
			list_push(&s->refs, rng_chance(r, 0.5) ?
				  h->popular[rng_below(r, h->n_popular)] :
				  live_from(h, rng_below(r, h->n)));
	}
}

/* The VM's own tables, JNI global references, the finalizer queue. */
static void plan_vm_roots(struct roots *rs, const struct heap *h,
			  struct rng *r)
{
	struct root_set *s = add_container(rs, HT_C_RT_ROOTTABLE, 0, 0);
	size_t n = h->n / 2000 + 1;

	for (size_t k = 0; k < h->n_popular && k < 200; k++)
		list_push(&s->refs, h->popular[k]);
	s = add_container(rs, HT_C_RT_INTERNALVM, 0, 0);
	for (size_t k = 0; k < 4; k++)
		list_push(&s->refs, live_from(h, rng_below(r, h->n)));
	for (unsigned p = 0; p < 3; p++) {
		size_t pointers = 5 + rng_below(r, 10);

		s = add_container(rs, HT_C_RT_STRONGPTR, 0, 0);
		for (size_t k = 0; k < pointers; k++)
			list_push(&s->refs, live_from(h, rng_below(r, h->n)));
	}
	s = add_container(rs, HT_C_RT_FINALIZED, 0, 0);
	for (size_t k = 0; k < n && k < 10000; k++)
		list_push(&s->refs, live_from(h, rng_below(r, h->n)));
}

/* The objects no one owns hang off frames, statics and JNI pointers. */
static void root_orphans(struct roots *rs, const struct index_list *orphans,
			 struct rng *r)
{
	size_t takers = rs->n;

	for (size_t k = 0; k < orphans->n; k++) {
		size_t c = rng_below(r, takers);

		while (rs->v[c].type == HT_C_RT_THREAD ||
		       rs->v[c].type == HT_C_RT_FINALIZED)
			c = (c + 1) % takers;
		list_push(&rs->v[c].refs, orphans->v[k]);
	}
}

/* A container may be begun again later: its roots add up. */
static void plan_reopened_static(struct roots *rs, const struct heap *h,
				 struct rng *r)
{
	for (size_t c = 0; c < rs->n; c++) {
		if (rs->v[c].type != HT_C_RT_CLASS)
			continue;
		list_push(&add_container(rs, HT_C_RT_CLASS, rs->v[c].id1,
					 0)->refs,
			  live_from(h, rng_below(r, h->n)));
		return;
	}
}

void plan_roots(struct roots *rs, const struct heap *h,
		const struct catalogue *cat,
		const struct index_list *orphans, struct rng *r)
{
	memset(rs, 0, sizeof(*rs));
	plan_thread_roots(rs, h, r);
	plan_static_roots(rs, h, cat, r);
	plan_vm_roots(rs, h, r);
	root_orphans(rs, orphans, r);
	plan_reopened_static(rs, h, r);
}

void roots_free(struct roots *rs)
{
	for (size_t c = 0; c < rs->n; c++)
		free(rs->v[c].refs.v);
	free(rs->v);
}

/* ---- Recording ----------------------------------------------------------- */

struct counts {
	uint64_t objects, references, nulls, roots, unreachable;
};

struct recording {
	struct ht_recorder *rec;
	const struct heap *h;
	const struct roots *roots;
	const struct catalogue *cat;
	bool fields;           /* refs name the fields they are read from */
	ht_id *field_ids;      /* of the PIECE refs being passed */
	enum ht_error_code first_error;
	ht_id *ids;            /* PIECE refs or roots being passed */
	uint32_t *flags;       /* as many zeros */
	uint32_t *stack;       /* of the heap walk */
	size_t limit;          /* objects allocated by the current dump */
	struct counts last;    /* of the last dump */
	uint64_t recorded;     /* objects, over all the dumps */
};

static void note(struct recording *g, enum ht_error_code code)
{
	if (code != HT_OK && g->first_error == HT_OK)
		g->first_error = code;
}

static void record_classes(struct recording *g, const struct catalogue *cat)
{
	for (size_t c = 0; c < cat->n; c++) {
		const struct klass *k = &cat->v[c];

		note(g, ht_class(g->rec, class_id(c), k->name,
				 k->kind == CK_INSTANCE, k->size));
	}
}

/* An instance class's k-th reference field: small dense numbers, as a
 * recorder would choose them. */
static ht_id field_id(size_t cls, size_t k)
{
	return (ht_id)(cls * MAX_FIELDS + k + 1);
}

static void record_fields(struct recording *g, const struct catalogue *cat)
{
	struct ht_field f[MAX_FIELDS];
	char names[MAX_FIELDS][16];

	for (size_t c = 0; c < cat->n; c++) {
		const struct klass *k = &cat->v[c];

		if (k->kind != CK_INSTANCE || k->fields == 0)
			continue;
		for (unsigned i = 0; i < k->fields && i < MAX_FIELDS; i++) {
			snprintf(names[i], sizeof(names[i]), "ref%u", i);
			f[i] = (struct ht_field){
				.id = field_id(c, i),
				.class_id = class_id(c),
				.name = names[i],
				.kind = HT_FIELD_INSTANCE,
			};
		}
		note(g, ht_fields(g->rec, k->fields < MAX_FIELDS ? k->fields :
				  MAX_FIELDS, f));
	}
}

static void record_methods(struct recording *g, const struct catalogue *cat,
			   struct rng *r)
{
	static const char *const verbs[] = {
		"run", "process", "handle", "get", "update", "visit", "build",
		"load", "apply", "lambda$main$0",
	};
	char name[128];

	for (size_t m = 0; m < N_METHODS; m++) {
		const struct klass *k =
			&cat->v[cat->instances.cls[rng_below(
				r, cat->instances.n)]];

		snprintf(name, sizeof(name), "%s.%s%s", k->name,
			 verbs[rng_below(r, ARRAY_SIZE(verbs))],
			 m % 3 ? "" : "Internal");
		note(g, ht_method(g->rec, method_id(m), name));
	}
}

static void record_threads(struct recording *g)
{
	static const char *const fixed[] = {
		"main", "Finalizer", "Reference Handler",
	};
	char name[32];

	for (unsigned t = 0; t < N_THREADS; t++) {
		if (t < ARRAY_SIZE(fixed))
			snprintf(name, sizeof(name), "%s", fixed[t]);
		else
			snprintf(name, sizeof(name), "worker-%u", t - 2);
		note(g, ht_thread(g->rec, t + 1, name));
	}
}

/* The roots of one container among the objects allocated so far. */
static void record_root_set(struct recording *g, const struct root_set *s)
{
	size_t n = 0;

	note(g, ht_begin_container(g->rec, s->type, s->id1, s->id2));
	for (size_t k = 0; k < s->refs.n; k++)
		if (s->refs.v[k] < g->limit)
			g->ids[n++] = g->h->id[s->refs.v[k]];
	if (n == 0)
		return;
	note(g, ht_root_references(g->rec, n, g->ids, g->flags, NULL, NULL,
				   NULL, HT_RESULT_OK));
	g->last.roots += n;
}

/* The field an instance's k-th reference is read from; an array's
 * elements are no field. */
static ht_id object_field(const struct recording *g, size_t i, size_t k)
{
	const struct klass *c = &g->cat->v[g->h->cls[i]];

	return c->kind == CK_INSTANCE && k < c->fields && k < MAX_FIELDS ?
		field_id(g->h->cls[i], k) : 0;
}

/* One object's fields, those past the dump's allocation point null. A
 * long array goes in pieces, each but the last saying more will come. */
static void record_object(struct recording *g, size_t i)
{
	const struct heap *h = g->h;
	const uint32_t *field = &h->ref[h->first[i]];
	size_t len = fanout(h, i), done = 0;

	do {
		size_t n = len - done < PIECE ? len - done : PIECE;
		uint32_t flags = done + n < len ? HT_OBJ_MORE_REFERENCES : 0;

		for (size_t k = 0; k < n; k++) {
			uint32_t t = field[done + k];
			int present = t != NO_REF && t < g->limit;

			g->ids[k] = present ? h->id[t] : 0;
			if (g->fields)
				g->field_ids[k] = object_field(g, i, done + k);
			g->last.references += present;
			g->last.nulls += !present;
		}
		note(g, ht_object_references_fields(
				g->rec, h->id[i], class_id(h->cls[i]),
				object_size(h, i), flags, n, g->ids, NULL,
				g->fields ? g->field_ids : NULL, -1,
				HT_RESULT_OK));
		done += n;
	} while (done < len);
	g->last.objects++;
	g->recorded++;
}

/* Depth-first from one object, each reported when first reached. An
 * object is marked when pushed, so the stack never holds more than the
 * heap. */
static void walk_from(struct recording *g, uint8_t *mark, size_t start)
{
	const struct heap *h = g->h;
	size_t top = 0;

	if (mark[start] & M_VISITED)
		return;
	mark[start] |= M_VISITED;
	g->stack[top++] = (uint32_t)start;
	while (top) {
		size_t i = g->stack[--top];
		const uint32_t *field = &h->ref[h->first[i]];

		record_object(g, i);
		/* Reversed, so that the first field is walked first. */
		for (size_t k = fanout(h, i); k-- > 0;) {
			uint32_t t = field[k];

			if (t == NO_REF || t >= g->limit ||
			    (mark[t] & M_VISITED))
				continue;
			mark[t] |= M_VISITED;
			g->stack[top++] = t;
		}
	}
}

/* The heap walk: from the roots in container order, then the rest (the
 * garbage) in address order, as "the remaining portions of the heap". */
static void record_heap_walk(struct recording *g, uint8_t *mark)
{
	uint64_t reached;

	for (size_t i = 0; i < g->limit; i++)
		mark[i] &= (uint8_t)~M_VISITED;
	for (size_t c = 0; c < g->roots->n; c++) {
		const struct index_list *refs = &g->roots->v[c].refs;

		for (size_t k = 0; k < refs->n; k++)
			if (refs->v[k] < g->limit)
				walk_from(g, mark, refs->v[k]);
	}
	reached = g->last.objects;
	for (size_t i = 0; i < g->limit; i++)
		walk_from(g, mark, i);
	g->last.unreachable = g->last.objects - reached;
}

static void record_dump(struct recording *g, uint8_t *mark, size_t limit)
{
	memset(&g->last, 0, sizeof(g->last));
	g->limit = limit;
	note(g, ht_begin_container(g->rec, HT_C_BEGIN, 0, 0));
	for (size_t c = 0; c < g->roots->n; c++)
		record_root_set(g, &g->roots->v[c]);
	note(g, ht_begin_container(g->rec, HT_C_HEAP, 0, 0));
	record_heap_walk(g, mark);
	note(g, ht_begin_container(g->rec, HT_C_END, 0, 0));
}

static size_t longest_root_set(const struct roots *rs)
{
	size_t most = 0;

	for (size_t c = 0; c < rs->n; c++)
		if (rs->v[c].refs.n > most)
			most = rs->v[c].refs.n;
	return most;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static struct ht_recorder *open_trace(const struct options *o)
{
	char command[256], seed[32];
	const struct ht_metadata meta[] = {
		{"generator", PROGRAM},
		{"seed", seed},
	};
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "msjvm",
		.runtime_version = "synthetic",
		.pointer_size = 8,
		.command_line = command,
		.n_metadata = ARRAY_SIZE(meta),
		.metadata = meta,
	};
	struct ht_error err;
	struct ht_recorder *rec;

	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed);
	snprintf(command, sizeof(command),
		 PROGRAM " -n %" PRIu64 " -r %g -s %" PRIu64 " --dumps %u",
		 o->objects, o->refs, o->seed, o->dumps);
	rec = ht_recorder_open(o->out, &header, NULL, &err);
	if (!rec)
		die("%s", err.message);
	return rec;
}

static uint64_t violations(const struct ht_recorder *rec)
{
	struct ht_record_stats st;
	uint64_t sum = 0;

	ht_recorder_stats(rec, &st);
	for (size_t v = 0; v < HT_V_COUNT_; v++)
		sum += st.violations[v];
	return sum;
}

void record_trace(const struct options *o, const struct heap *h,
		  const struct catalogue *cat, const struct roots *rs,
		  struct rng *r, double started)
{
	size_t most = longest_root_set(rs);
	struct recording g = {
		.h = h,
		.roots = rs,
		.cat = cat,
		.fields = o->fields,
		.rec = open_trace(o),
	};
	struct ht_error err;
	uint64_t bad;

	most = most > PIECE ? most : PIECE;
	g.ids = xcalloc(most, sizeof(*g.ids));
	g.flags = xcalloc(most, sizeof(*g.flags));
	g.field_ids = xcalloc(most, sizeof(*g.field_ids));
	g.stack = xcalloc(h->n, sizeof(*g.stack));
	record_classes(&g, cat);
	if (o->fields)
		record_fields(&g, cat);
	record_methods(&g, cat, r);
	record_threads(&g);
	for (unsigned d = 1; d <= o->dumps; d++)
		record_dump(&g, h->mark, (size_t)(h->n * d / o->dumps));
	bad = violations(g.rec);
	if (ht_recorder_close(g.rec, &err) != HT_OK)
		die("%s", err.message);
	if (g.first_error != HT_OK)
		die("%s: the shim refused an event (error %d)", o->out,
		    (int)g.first_error);
	if (bad)
		die("%s: the shim counted %" PRIu64 " protocol violations",
		    o->out, bad);
	fprintf(stderr, PROGRAM ": %s: %" PRIu64 " objects, %" PRIu64
		" references (%.2f per object, %" PRIu64 " null fields), %"
		PRIu64 " roots, %" PRIu64 " unreachable, %u dump%s, %" PRIu64
		" file bytes (%.2f per object recorded), %.2f s\n",
		o->out, g.last.objects, g.last.references,
		(double)g.last.references / (double)g.last.objects,
		g.last.nulls, g.last.roots, g.last.unreachable, o->dumps,
		o->dumps == 1 ? "" : "s", file_size(o->out),
		(double)file_size(o->out) / (double)g.recorded,
		now() - started);
	free(g.ids);
	free(g.flags);
	free(g.field_ids);
	free(g.stack);
}
