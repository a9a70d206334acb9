/*
 * sites.c - allocation sites (sites.h): one replay through the relocation
 * tracker, watching every allocation that names a stack, notes each one's
 * life (its GCs, its generations, the dump it is in, its death); then the
 * stacks are grouped into sites by their first frames, and each site's
 * figures are summed, weighted by the inverse of the chance that its
 * samples were drawn.
 */
#include "analysis/sites.h"

#include "analysis/alloc_stacks.h"
#include "analysis/dominators.h"
#include "analysis/relocation.h"
#include "util/alloc.h"
#include "util/membudget.h"
#include "util/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One allocation with a stack, and what became of it. */
struct sample {
	uint32_t serial;
	ht_id stack;
	uint64_t size;
	uint64_t born_gcs;        /* GCs applied before its allocation */
	uint64_t survived;        /* GCs that proved it alive */
	uint8_t gen, first_gen, top_gen;
	bool live;                /* in the dump asked for */
	bool died, lost;
	ht_id id_in_dump;
	uint32_t group;
};

/* The replay's tables. This struct is not an API; it may change from one
 * release to the next. */
struct sites_work {
	struct input *in;
	struct ht_reader *reader;
	void *progress;
	struct reloc *tracker;
	int64_t dump;
	bool only_recorded;       /* no replay when the header has no sites */
	uint64_t gcs;             /* applied so far */
	uint32_t collected;       /* generations any GC collected */
	bool out_of_memory;

	struct alloc_stacks stacks;
	struct sample *samples;
	size_t n_samples, cap_samples;
};

double site_error(double variance)
{
	return variance > 0 ? 1.96 * sqrt(variance) : 0;
}

/* ---- the replay ---------------------------------------------------------- */

/* Samples come in the order of their serials, which the tracker gives in
 * the order tracking began. */
static struct sample *sample_of(struct sites_work *w, uint32_t serial)
{
	size_t at = LOWER_BOUND(0, w->n_samples, i,
				w->samples[i].serial < serial);

	return at < w->n_samples && w->samples[at].serial == serial
		       ? &w->samples[at] : NULL;
}

static void note_allocated(struct sites_work *w, const struct reloc_step *s)
{
	if (ALLOC_GROW(w->samples, w->n_samples + 1, w->cap_samples) < 0) {
		w->out_of_memory = true;
		return;
	}
	w->samples[w->n_samples++] = (struct sample){
		.serial = s->object,
		.stack = s->stack,
		.size = s->size,
		.born_gcs = w->gcs,
		.gen = (uint8_t)s->generation,
		.first_gen = (uint8_t)s->generation,
		.top_gen = (uint8_t)s->generation,
	};
}

static void set_generation(struct sample *p, unsigned g)
{
	if (g == RELOC_NO_GENERATION)
		return;
	p->gen = (uint8_t)g;
	if (p->first_gen == RELOC_NO_GENERATION)
		p->first_gen = (uint8_t)g;
	if (p->top_gen == RELOC_NO_GENERATION || g > p->top_gen)
		p->top_gen = (uint8_t)g;
}

static void note_step(void *ctx, const struct reloc_step *s)
{
	struct sites_work *w = ctx;
	struct sample *p;

	if (s->kind == RELOC_ALLOCATED) {
		note_allocated(w, s);
		return;
	}
	p = sample_of(w, s->object);
	if (!p)
		return;
	switch (s->kind) {
	case RELOC_MOVED:
	case RELOC_SURVIVED:
	case RELOC_UNTOUCHED:
		p->survived++;
		set_generation(p, s->generation);
		break;
	case RELOC_PROMOTED:
		set_generation(p, s->generation);
		break;
	case RELOC_SEEN:
		set_generation(p, s->generation);
		if (s->dump == w->dump) {
			p->live = true;
			p->id_in_dump = s->to;
		}
		break;
	case RELOC_DIED:
		p->died = true;
		break;
	case RELOC_LOST:
		p->lost = true;
		break;
	default:
		break;
	}
}

static void note_gc(void *ctx, const struct reloc_gc_summary *g)
{
	struct sites_work *w = ctx;

	w->gcs++;
	w->collected |= g->generations;
}

static int on_event(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	struct sites_work *w = ctx;
	const struct session_voice *voice = w->in->voice;

	if (voice->progress_update)
		voice->progress_update(w->progress, st->event_index + 1,
				       ht_reader_position(w->reader).offset);
	if (alloc_stacks_note(&w->stacks, ev) < 0)
		w->out_of_memory = true;
	if (w->out_of_memory)
		return 1;
	return reloc_on_event(w->tracker, ev, st);
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	return reloc_on_dump_begin(((struct sites_work *)ctx)->tracker, st);
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	return reloc_on_dump_end(((struct sites_work *)ctx)->tracker, st);
}

/* The header's `sites`: "all", or the interval in bytes. */
static void read_header(struct sites *s, const struct ht_header *h)
{
	for (size_t i = 0; i < h->n_metadata; i++) {
		const char *v = h->metadata[i].value;
		char *end;
		unsigned long long n;

		if (strcmp(h->metadata[i].key, "sites") != 0 || !v)
			continue;
		s->recorded = true;
		if (strcmp(v, "all") == 0)
			return;
		n = strtoull(v, &end, 10);
		if (*end == '\0' && n > 0) {
			s->sampled = true;
			s->interval = n;
		}
		return;
	}
}

/* The replay: 0, or -1 once said why not. */
static int replay(struct sites *s, struct sites_work *w)
{
	const struct session_voice *voice = w->in->voice;
	const char *path = w->in->name;
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct reloc_hooks hooks = {
		.ctx = w, .step = note_step, .gc_done = note_gc,
	};
	struct ht_replay_summary summary;
	struct ht_error err;
	int rc;

	w->reader = input_open(w->in);
	if (!w->reader)
		return -1;
	read_header(s, ht_reader_header(w->reader));
	s->ages_known = ht_reader_header(w->reader)->reports_survivors;
	if (w->only_recorded && !s->recorded) {
		ht_reader_close(w->reader);
		w->reader = NULL;
		return 0;
	}
	w->tracker = reloc_new(ht_reader_header(w->reader)->reports_survivors,
			       &hooks);
	if (!w->tracker) {
		ht_reader_close(w->reader);
		voice->error("out of memory");
		return -1;
	}
	reloc_watch_sampled(w->tracker);
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	if (voice->progress_start)
		w->progress = voice->progress_start("sites", path);
	rc = ht_replay(w->reader, &cb, w, &summary, &err);
	if (rc == 0 || (rc < 0 && summary.read_error))
		rc = reloc_finish(w->tracker) ? 1 : rc;
	if (voice->progress_end)
		voice->progress_end(w->progress);
	ht_reader_close(w->reader);
	w->reader = NULL;
	rc = session_tracked_replay_end(w->in, rc, &summary, &err, w->tracker,
					w->out_of_memory, &s->damaged);
	reloc_free(w->tracker);
	w->tracker = NULL;
	return rc;
}

/* ---- sites from stacks ---------------------------------------------------- */

static int compare_text(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Frames that make a site: depth 1 is the method alone (no line). */
static size_t site_frames(unsigned depth, size_t count)
{
	return depth && depth < count ? depth : count;
}

/* Two frames as a site sees them. */
static int compare_frame(const struct sites_work *w, ht_id a, ht_id b,
			 bool lines)
{
	const struct alloc_method *x = alloc_stacks_method(&w->stacks, a);
	const struct alloc_method *y = alloc_stacks_method(&w->stacks, b);
	int c;

	if (!x || !y) {
		if (x || y)
			return x ? 1 : -1;
		return (a > b) - (a < b);
	}
	c = compare_text(x->name, y->name);
	if (!c)
		c = compare_text(x->file, y->file);
	if (!c && lines)
		c = (x->line > y->line) - (x->line < y->line);
	return c;
}

struct stack_order {
	const struct sites_work *w;
	unsigned depth;
};

static int compare_stacks(const void *a, const void *b, void *ctx)
{
	const struct stack_order *o = ctx;
	const struct alloc_stack *x = *(struct alloc_stack *const *)a;
	const struct alloc_stack *y = *(struct alloc_stack *const *)b;
	size_t nx = site_frames(o->depth, x->count);
	size_t ny = site_frames(o->depth, y->count);

	for (size_t i = 0; i < nx && i < ny; i++) {
		int c = compare_frame(o->w, o->w->stacks.frames[x->first + i],
				      o->w->stacks.frames[y->first + i],
				      o->depth != 1);

		if (c)
			return c;
	}
	return (nx > ny) - (nx < ny);
}

static void frame_of(const struct sites_work *w, ht_id id, bool line,
		     struct site_frame *f)
{
	const struct alloc_method *m = alloc_stacks_method(&w->stacks, id);

	*f = (struct site_frame){.id = id};
	if (!m)
		return;
	f->method = m->name;
	f->file = m->file;
	f->line = line ? m->line : 0;
}

/* Groups the stacks into sites, numbered by their order; one more site
 * for the samples whose stack was never declared. 0, or -1 when out of
 * memory. */
static int group_stacks(struct sites *s, struct sites_work *w)
{
	struct stack_order order = {.w = w, .depth = s->depth};
	size_t n_stacks = w->stacks.n_stacks;
	struct alloc_stack **by = malloc((n_stacks ? n_stacks : 1) *
					 sizeof(*by));
	size_t n = 0;

	if (!by)
		return -1;
	for (size_t i = 0; i < n_stacks; i++)
		by[i] = &w->stacks.stacks[i];
	qsort_r(by, n_stacks, sizeof(*by), compare_stacks, &order);
	s->site = calloc(n_stacks + 1, sizeof(*s->site));
	s->frames = calloc(w->stacks.n_frames + 1, sizeof(*s->frames));
	if (!s->site || !s->frames) {
		free(by);
		return -1;
	}
	for (size_t i = 0; i < n_stacks; i++) {
		struct alloc_stack *k = by[i];
		struct site *site;
		size_t nf;

		if (i && compare_stacks(&by[i - 1], &by[i], &order) == 0) {
			k->group = by[i - 1]->group;
			continue;
		}
		k->group = (uint32_t)n;
		site = &s->site[n++];
		nf = site_frames(s->depth, k->count);
		site->first_frame = s->n_frames;
		site->n_frames = nf;
		for (size_t f = 0; f < nf; f++)
			frame_of(w, w->stacks.frames[k->first + f],
				 s->depth != 1, &s->frames[s->n_frames++]);
	}
	s->site[n].unknown_stack = true;
	s->n_sites = n + 1;
	free(by);
	return 0;
}

/* ---- figures -------------------------------------------------------------- */

/* The variance of a Horvitz-Thompson sum adds (1 - p)/p^2 per object
 * drawn with probability p. */
void site_figure_add(struct site_figure *f, uint64_t interval,
		     uint64_t size)
{
	double p = 1, x = (double)size;

	if (interval) {
		/* a size not yet known (Mono's pinned allocations) is
		 * drawn as the smallest */
		p = -expm1(-(x > 0 ? x : 1) / (double)interval);
		if (!(p > 0))
			p = 1;
	}
	f->objects += 1 / p;
	f->bytes += x / p;
	f->var_objects += (1 - p) / (p * p);
	f->var_bytes += x * x * (1 - p) / (p * p);
	f->samples++;
}

static void add_sample(struct site_figure *f, const struct sites *s,
		       uint64_t size)
{
	site_figure_add(f, s->sampled ? s->interval : 0, size);
}

/* The oldest generation the GCs collect: 2 on the CLR, Mono's 1. */
static unsigned oldest_generation(uint32_t collected)
{
	for (unsigned g = 2; g > 0; g--)
		if (collected & (1u << g))
			return g;
	return 0;
}

struct age_row {
	uint32_t group;
	uint64_t gcs;
	uint64_t size;
};

static int compare_ages(const void *a, const void *b)
{
	const struct age_row *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->gcs != y->gcs)
		return x->gcs < y->gcs ? -1 : 1;
	return 0;
}

static int sum_ages(struct sites *s, const struct sites_work *w)
{
	struct age_row *rows = malloc((w->n_samples ? w->n_samples : 1) *
				      sizeof(*rows));
	size_t i = 0;

	if (!rows)
		return -1;
	for (size_t k = 0; k < w->n_samples; k++)
		rows[k] = (struct age_row){w->samples[k].group,
					   w->samples[k].survived,
					   w->samples[k].size};
	qsort(rows, w->n_samples, sizeof(*rows), compare_ages);
	while (i < w->n_samples) {
		struct site *site = &s->site[rows[i].group];
		size_t j = i, distinct = 0;

		while (j < w->n_samples && rows[j].group == rows[i].group) {
			if (j == i || rows[j].gcs != rows[j - 1].gcs)
				distinct++;
			j++;
		}
		site->ages = calloc(distinct, sizeof(*site->ages));
		if (!site->ages) {
			free(rows);
			return -1;
		}
		for (size_t k = i; k < j; k++) {
			if (k == i || rows[k].gcs != rows[k - 1].gcs)
				site->ages[site->n_ages++].gcs = rows[k].gcs;
			add_sample(&site->ages[site->n_ages - 1].figure, s,
				   rows[k].size);
		}
		i = j;
	}
	free(rows);
	return 0;
}

/* Each sample's figures, and the retained sizes of the dump's. */
static int sum_figures(struct sites *s, struct sites_work *w,
		       const struct heap *h, const struct heap_dominators *d)
{
	uint32_t *group_of_object = malloc((h->n ? h->n : 1) *
					   sizeof(*group_of_object));
	uint64_t *retained = calloc(s->n_sites, sizeof(*retained));

	if (!group_of_object || !retained) {
		free(group_of_object);
		free(retained);
		return -1;
	}
	for (uint32_t x = 0; x < h->n; x++)
		group_of_object[x] = HEAP_NONE;
	s->oldest = oldest_generation(w->collected);
	for (size_t k = 0; k < w->n_samples; k++) {
		struct sample *p = &w->samples[k];
		const struct alloc_stack *row =
			alloc_stacks_stack(&w->stacks, p->stack);
		struct site *site;

		p->group = row ? row->group : (uint32_t)(s->n_sites - 1);
		site = &s->site[p->group];
		if (!row)
			s->unknown_stacks++;
		add_sample(&site->allocated, s, p->size);
		if (p->top_gen != RELOC_NO_GENERATION)
			s->generations_known = true;
		if (p->top_gen != RELOC_NO_GENERATION &&
		    p->top_gen >= s->oldest && p->first_gen < s->oldest)
			add_sample(&site->promoted, s, p->size);
		if (p->died && p->gen != RELOC_NO_GENERATION &&
		    p->gen >= s->oldest)
			add_sample(&site->died_old, s, p->size);
		if (p->live) {
			uint32_t x = heap_find(h, p->id_in_dump);

			add_sample(&site->live, s, p->size);
			if (x != HEAP_NONE)
				group_of_object[x] = p->group;
		}
	}
	s->samples = w->n_samples;
	if (heap_retained_by_group(h, d, group_of_object, s->n_sites,
				   retained) < 0) {
		free(group_of_object);
		free(retained);
		return -1;
	}
	for (size_t g = 0; g < s->n_sites; g++)
		s->site[g].retained = retained[g];
	free(group_of_object);
	free(retained);
	return sum_ages(s, w);
}

/* Sites no sample fell into (a stack declared, never used) go. */
static void drop_empty(struct sites *s)
{
	size_t n = 0;

	for (size_t g = 0; g < s->n_sites; g++) {
		if (!s->site[g].allocated.samples) {
			free(s->site[g].ages);
			continue;
		}
		s->site[n++] = s->site[g];
	}
	s->n_sites = n;
}

static void work_free(struct sites_work *w)
{
	if (!w)
		return;
	alloc_stacks_free(&w->stacks);
	free(w->samples);
	free(w);
}

/*
 * The replay that every question about sites begins with: the samples
 * and their lives, the dump `dump`'s ids, the stacks sorted. With
 * only_recorded, a trace whose header has no sites is not read past it.
 * SITES_FOUND with *out (owned by s), SITES_NONE when no allocation has
 * a stack, or SITES_FAILED once said why.
 */
static enum sites_result replay_samples(struct sites *s, struct input *in,
					uint64_t dump, bool only_recorded,
					struct sites_work **out)
{
	struct sites_work *w = calloc(1, sizeof(*w));

	s->dump = dump;
	if (!w) {
		in->voice->error("out of memory");
		return SITES_FAILED;
	}
	s->work = w;
	w->in = in;
	w->dump = (int64_t)dump;
	w->only_recorded = only_recorded;
	if (replay(s, w) < 0)
		return SITES_FAILED;
	if (!w->n_samples)
		return SITES_NONE;
	alloc_stacks_finish(&w->stacks);
	*out = w;
	return SITES_FOUND;
}

enum sites_result sites_find(struct sites *s, struct input *in,
			     const struct heap *h,
			     const struct heap_dominators *d)
{
	unsigned depth = s->depth;
	struct sites_work *w;
	enum sites_result r;

	memset(s, 0, sizeof(*s));
	s->depth = depth;
	r = replay_samples(s, in, h->dump, false, &w);
	if (r != SITES_FOUND)
		return r;
	if (group_stacks(s, w) < 0 || sum_figures(s, w, h, d) < 0) {
		in->voice->error("out of memory");
		return SITES_FAILED;
	}
	drop_empty(s);
	return SITES_FOUND;
}

enum sites_result sites_allocation_of(struct sites *s, struct input *in,
				      uint64_t dump, ht_id id)
{
	const struct alloc_stack *k = NULL;
	struct sites_work *w;
	enum sites_result r;

	memset(s, 0, sizeof(*s));
	r = replay_samples(s, in, dump, true, &w);
	if (r != SITES_FOUND)
		return r;
	for (size_t i = 0; i < w->n_samples && !k; i++)
		if (w->samples[i].live && w->samples[i].id_in_dump == id)
			k = alloc_stacks_stack(&w->stacks,
					       w->samples[i].stack);
	if (!k)
		return SITES_NONE;
	s->frames = calloc(k->count + 1, sizeof(*s->frames));
	if (!s->frames) {
		in->voice->error("out of memory");
		return SITES_FAILED;
	}
	for (size_t f = 0; f < k->count; f++)
		frame_of(w, w->stacks.frames[k->first + f], true,
			 &s->frames[s->n_frames++]);
	return SITES_FOUND;
}

static int compare_live_ids(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->live != y->live)
		return x->live ? -1 : 1;
	if (x->id_in_dump != y->id_in_dump)
		return x->id_in_dump < y->id_in_dump ? -1 : 1;
	return 0;
}

enum sites_result sites_allocating_frames(struct sites *s, struct input *in,
					  uint64_t dump, const ht_id *ids,
					  size_t n, struct site_frame *by)
{
	struct sites_work *w;
	size_t live = 0;
	enum sites_result r;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++)
		by[i] = (struct site_frame){0};
	r = replay_samples(s, in, dump, true, &w);
	if (r != SITES_FOUND)
		return r;
	/* the live samples first, by their id in the dump */
	qsort(w->samples, w->n_samples, sizeof(*w->samples), compare_live_ids);
	while (live < w->n_samples && w->samples[live].live)
		live++;
	for (size_t i = 0; i < n; i++) {
		size_t at = LOWER_BOUND(0, live, k,
					w->samples[k].id_in_dump < ids[i]);
		const struct alloc_stack *k;

		if (at == live || w->samples[at].id_in_dump != ids[i])
			continue;
		k = alloc_stacks_stack(&w->stacks, w->samples[at].stack);
		if (k && k->count)
			frame_of(w, w->stacks.frames[k->first], true, &by[i]);
	}
	return SITES_FOUND;
}

void sites_free(struct sites *s)
{
	for (size_t g = 0; g < s->n_sites; g++)
		free(s->site[g].ages);
	free(s->site);
	free(s->frames);
	work_free(s->work);
	memset(s, 0, sizeof(*s));
}

/* ---- as a flame graph ------------------------------------------------------ */

static char *frame_name_of(const struct site_frame *fr)
{
	return alloc_frame_name(fr->method, fr->id, fr->file, fr->line);
}

/* A site's path from its outermost frame: names[0 .. n). */
struct site_path {
	char **names;
	size_t n;
	uint64_t bytes, objects;
};

static int compare_paths(const void *a, const void *b)
{
	const struct site_path *x = a, *y = b;

	for (size_t i = 0; i < x->n && i < y->n; i++) {
		int c = strcmp(x->names[i], y->names[i]);

		if (c)
			return c;
	}
	return (x->n > y->n) - (x->n < y->n);
}

double site_measure_of(const struct site *x, enum site_measure by)
{
	switch (by) {
	case SITE_LIVE:
		return x->live.bytes;
	case SITE_RETAINED:
		return (double)x->retained;
	case SITE_DIED_OLD:
		return x->died_old.bytes;
	case SITE_ALLOCATED:
		break;
	}
	return x->allocated.bytes;
}

uint64_t site_round(double x)
{
	return x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(x);
}

/* The names of every path, each owned by f (freed with it). */
static int make_paths(const struct sites *s, enum site_measure by,
		      struct site_path *paths, struct flame *f)
{
	for (size_t g = 0; g < s->n_sites; g++) {
		const struct site *x = &s->site[g];
		size_t n = x->unknown_stack ? 1 : x->n_frames;

		paths[g].names = calloc(n ? n : 1, sizeof(char *));
		if (!paths[g].names)
			return -1;
		paths[g].n = n;
		paths[g].bytes = site_round(site_measure_of(x, by));
		paths[g].objects = site_round(by == SITE_ALLOCATED ?
						x->allocated.objects :
						x->live.objects);
		for (size_t i = 0; i < n; i++) {
			char *name = x->unknown_stack ?
				strdup("(a stack never declared)") :
				frame_name_of(&s->frames[x->first_frame + n - 1 - i]);

			if (!name || ALLOC_GROW(f->owned, f->n_owned + 1,
						f->cap_owned) < 0) {
				free(name);
				return -1;
			}
			f->owned[f->n_owned++] = name;
			paths[g].names[i] = name;
		}
	}
	return 0;
}

/* Appends frame x under parent (FLAME_NONE: a top frame); children come
 * in name order, since the paths are sorted. last[] is each frame's last
 * child so far. */
static void link_frame(struct flame *f, uint32_t *last, uint32_t *last_top,
		       uint32_t x, uint32_t parent)
{
	struct flame_frame *fr = &f->frames[x];

	fr->parent = parent;
	fr->first_child = fr->next_sibling = FLAME_NONE;
	last[x] = FLAME_NONE;
	if (parent == FLAME_NONE) {
		if (*last_top == FLAME_NONE)
			f->first_top = x;
		else
			f->frames[*last_top].next_sibling = x;
		*last_top = x;
		return;
	}
	if (last[parent] == FLAME_NONE)
		f->frames[parent].first_child = x;
	else
		f->frames[last[parent]].next_sibling = x;
	last[parent] = x;
}

static int build_frames(const struct site_path *paths, size_t n_paths,
			size_t most, struct flame *f)
{
	uint32_t *last = calloc(most ? most : 1, sizeof(*last));
	uint32_t *open = calloc(HT_STACK_MAX_FRAMES + 1, sizeof(*open));
	uint32_t last_top = FLAME_NONE;

	f->frames = calloc(most ? most : 1, sizeof(*f->frames));
	if (!last || !open || !f->frames) {
		free(last);
		free(open);
		return -1;
	}
	for (size_t p = 0; p < n_paths; p++) {
		const struct site_path *sp = &paths[p];
		size_t common = 0;

		if (p)
			while (common < sp->n && common < paths[p - 1].n &&
			       strcmp(sp->names[common],
				      paths[p - 1].names[common]) == 0)
				common++;
		for (size_t d = common; d < sp->n; d++) {
			uint32_t x = (uint32_t)f->n++;

			link_frame(f, last, &last_top, x,
				   d ? open[d - 1] : FLAME_NONE);
			f->frames[x].depth = (uint32_t)d;
			f->frames[x].name = sp->names[d];
			open[d] = x;
			if (d > f->max_depth)
				f->max_depth = (uint32_t)d;
		}
		if (sp->n) {
			f->frames[open[sp->n - 1]].self += sp->bytes;
			f->frames[open[sp->n - 1]].objects += sp->objects;
			f->objects += sp->objects;
		}
	}
	/* a parent comes before its children: totals from the last up */
	for (size_t i = f->n; i-- > 0;) {
		struct flame_frame *fr = &f->frames[i];

		fr->total += fr->self;
		if (fr->parent != FLAME_NONE)
			f->frames[fr->parent].total += fr->total;
		else
			f->total += fr->total;
	}
	free(last);
	free(open);
	return 0;
}

int sites_flame(const struct sites *s, enum site_measure by,
		struct flame *f)
{
	struct site_path *paths = calloc(s->n_sites ? s->n_sites : 1,
					 sizeof(*paths));
	size_t most = 0;
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->first_top = FLAME_NONE;
	if (paths && make_paths(s, by, paths, f) == 0) {
		for (size_t g = 0; g < s->n_sites; g++)
			most += paths[g].n;
		qsort(paths, s->n_sites, sizeof(*paths), compare_paths);
		rc = build_frames(paths, s->n_sites, most, f);
	}
	for (size_t g = 0; paths && g < s->n_sites; g++)
		free(paths[g].names);
	free(paths);
	if (rc < 0)
		flame_free(f);
	return rc;
}

/* ---- two dumps ------------------------------------------------------------- */

static int compare_frame_texts(const struct site_frame *x,
			       const struct site_frame *y)
{
	int c = compare_text(x->method, y->method);

	if (!c)
		c = compare_text(x->file, y->file);
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	if (!c && !x->method)
		c = (x->id > y->id) - (x->id < y->id);
	return c;
}

struct site_ref {
	const struct sites *s;
	const struct site *x;
};

static int compare_site_refs(const void *a, const void *b)
{
	const struct site_ref *p = a, *q = b;
	size_t n = p->x->n_frames < q->x->n_frames ? p->x->n_frames
						   : q->x->n_frames;

	if (p->x->unknown_stack != q->x->unknown_stack)
		return p->x->unknown_stack ? 1 : -1;
	for (size_t i = 0; i < n; i++) {
		int c = compare_frame_texts(
			&p->s->frames[p->x->first_frame + i],
			&q->s->frames[q->x->first_frame + i]);

		if (c)
			return c;
	}
	return (p->x->n_frames > q->x->n_frames) -
	       (p->x->n_frames < q->x->n_frames);
}

static struct site_ref *site_refs(const struct sites *s)
{
	struct site_ref *r = malloc((s->n_sites ? s->n_sites : 1) *
				    sizeof(*r));

	if (!r)
		return NULL;
	for (size_t g = 0; g < s->n_sites; g++)
		r[g] = (struct site_ref){s, &s->site[g]};
	qsort(r, s->n_sites, sizeof(*r), compare_site_refs);
	return r;
}

static void take_before(struct site_change *c, const struct site_ref *r)
{
	c->frames = &r->s->frames[r->x->first_frame];
	c->n_frames = r->x->n_frames;
	c->unknown_stack = r->x->unknown_stack;
	c->live_before = site_round(r->x->live.bytes);
	c->live_objects_before = site_round(r->x->live.objects);
	c->retained_before = r->x->retained;
	c->allocated_before = site_round(r->x->allocated.bytes);
}

static void take_after(struct site_change *c, const struct site_ref *r)
{
	c->frames = &r->s->frames[r->x->first_frame];
	c->n_frames = r->x->n_frames;
	c->unknown_stack = r->x->unknown_stack;
	c->live_after = site_round(r->x->live.bytes);
	c->live_objects_after = site_round(r->x->live.objects);
	c->retained_after = r->x->retained;
	c->allocated_after = site_round(r->x->allocated.bytes);
}

static int64_t growth(uint64_t before, uint64_t after)
{
	return (int64_t)(after - before);
}

static int compare_changes(const void *a, const void *b)
{
	const struct site_change *x = a, *y = b;
	int64_t gx = growth(x->live_before, x->live_after);
	int64_t gy = growth(y->live_before, y->live_after);

	if (gx != gy)
		return gx > gy ? -1 : 1;
	gx = growth(x->retained_before, x->retained_after);
	gy = growth(y->retained_before, y->retained_after);
	if (gx != gy)
		return gx > gy ? -1 : 1;
	if (x->n_frames && y->n_frames)
		return compare_frame_texts(&x->frames[0], &y->frames[0]);
	return (x->n_frames > y->n_frames) - (x->n_frames < y->n_frames);
}

int sites_compare(const struct sites *a, const struct sites *b,
		  struct site_change **out, size_t *n)
{
	struct site_ref *ra = site_refs(a), *rb = site_refs(b);
	size_t i = 0, j = 0, k = 0;
	struct site_change *c = calloc(a->n_sites + b->n_sites + 1,
				       sizeof(*c));

	if (!ra || !rb || !c) {
		free(ra);
		free(rb);
		free(c);
		return -1;
	}
	while (i < a->n_sites || j < b->n_sites) {
		int cmp = i == a->n_sites ? 1 : j == b->n_sites ? -1 :
			  compare_site_refs(&ra[i], &rb[j]);

		if (cmp <= 0)
			take_before(&c[k], &ra[i++]);
		if (cmp >= 0)
			take_after(&c[k], &rb[j++]);
		k++;
	}
	qsort(c, k, sizeof(*c), compare_changes);
	free(ra);
	free(rb);
	*out = c;
	*n = k;
	return 0;
}
