/*
 * alloc_stacks.c - the methods and stacks of a trace (alloc_stacks.h):
 * appended as the replay meets them, then sorted by id for binary
 * searches; a trace declares a few thousand at most, against the
 * millions of allocations that name them.
 */
#include "analysis/alloc_stacks.h"

#include "util/alloc.h"
#include "util/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int note_method(struct alloc_stacks *t, const struct ht_ev_method *m)
{
	struct alloc_method *r;

	if (ALLOC_GROW(t->methods, t->n_methods + 1, t->cap_methods) < 0)
		return -1;
	r = &t->methods[t->n_methods];
	r->id = m->id;
	r->seq = t->n_methods;
	r->line = m->line;
	r->name = dup_or_null(m->name);
	r->file = dup_or_null(m->file);
	if ((m->name && !r->name) || (m->file && !r->file)) {
		free(r->name);
		free(r->file);
		return -1;
	}
	t->n_methods++;
	return 0;
}

static int note_stack(struct alloc_stacks *t, const struct ht_ev_stack *k)
{
	if (ALLOC_GROW(t->stacks, t->n_stacks + 1, t->cap_stacks) < 0 ||
	    ALLOC_GROW(t->frames, t->n_frames + k->count + 1,
		       t->cap_frames) < 0)
		return -1;
	if (k->count)
		memcpy(t->frames + t->n_frames, k->frames,
		       k->count * sizeof(*k->frames));
	t->stacks[t->n_stacks++] = (struct alloc_stack){
		.id = k->id, .first = t->n_frames, .count = k->count,
		.seq = t->n_stacks,
	};
	t->n_frames += k->count;
	return 0;
}

int alloc_stacks_note(struct alloc_stacks *t, const struct ht_event *ev)
{
	if (ev->type == HT_EV_METHOD)
		return note_method(t, &ev->u.method);
	if (ev->type == HT_EV_STACK)
		return note_stack(t, &ev->u.stack);
	return 0;
}

/* By id, and an id's declarations in the trace's order: the first
 * comes first. */
static int compare_method_ids(const void *a, const void *b)
{
	const struct alloc_method *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int compare_stack_ids(const void *a, const void *b)
{
	const struct alloc_stack *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

void alloc_stacks_finish(struct alloc_stacks *t)
{
	size_t n = 0;

	if (t->n_methods)
		qsort(t->methods, t->n_methods, sizeof(*t->methods),
		      compare_method_ids);
	for (size_t i = 0; i < t->n_methods; i++) {
		if (n && t->methods[n - 1].id == t->methods[i].id) {
			free(t->methods[i].name);
			free(t->methods[i].file);
			continue;
		}
		t->methods[n++] = t->methods[i];
	}
	t->n_methods = n;
	if (t->n_stacks)
		qsort(t->stacks, t->n_stacks, sizeof(*t->stacks),
		      compare_stack_ids);
	n = 0;
	for (size_t i = 0; i < t->n_stacks; i++)
		if (!n || t->stacks[n - 1].id != t->stacks[i].id)
			t->stacks[n++] = t->stacks[i];
	t->n_stacks = n;
}

const struct alloc_method *alloc_stacks_method(const struct alloc_stacks *t,
					       ht_id id)
{
	size_t at = LOWER_BOUND(0, t->n_methods, i, t->methods[i].id < id);

	return at < t->n_methods && t->methods[at].id == id ? &t->methods[at]
							    : NULL;
}

struct alloc_stack *alloc_stacks_stack(const struct alloc_stacks *t,
				       ht_id id)
{
	size_t at = LOWER_BOUND(0, t->n_stacks, i, t->stacks[i].id < id);

	return at < t->n_stacks && t->stacks[at].id == id ? &t->stacks[at]
							  : NULL;
}

void alloc_stacks_free(struct alloc_stacks *t)
{
	for (size_t i = 0; i < t->n_methods; i++) {
		free(t->methods[i].name);
		free(t->methods[i].file);
	}
	free(t->methods);
	free(t->stacks);
	free(t->frames);
	memset(t, 0, sizeof(*t));
}

char *alloc_frame_name(const char *method, ht_id id, const char *file,
		       uint32_t line)
{
	char *name = NULL;
	int n;

	if (!method)
		n = asprintf(&name, "method 0x%llx", (unsigned long long)id);
	else if (file && line)
		n = asprintf(&name, "%s(%s:%u)", method, file, line);
	else if (file)
		n = asprintf(&name, "%s(%s)", method, file);
	else
		n = asprintf(&name, "%s", method);
	return n < 0 ? NULL : name;
}
