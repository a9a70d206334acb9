/*
 * class_names.c - the table of class_names.h: names in arrival order,
 * then sorted by id (then arrival), so that the last name of an id is the
 * last of its run.
 */
#include "analysis/class_names.h"

#include "util/alloc.h"
#include "util/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This struct is not an API; it may change from one release to the
 * next. */
struct class_name {
	ht_id id;
	char *name;
	size_t order; /* of arrival */
};

int class_names_add(struct class_names *t, const struct ht_ev_class *e)
{
	struct class_name *c;

	if (!e->name)
		return 0;
	if (ALLOC_GROW(t->c, t->n + 1, t->cap) < 0)
		return -1;
	c = &t->c[t->n];
	c->name = strdup(e->name);
	if (!c->name)
		return -1;
	c->id = e->id;
	c->order = t->n++;
	return 0;
}

static int compare_classes(const void *a, const void *b)
{
	const struct class_name *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

void class_names_sort(struct class_names *t)
{
	if (t->n)
		qsort(t->c, t->n, sizeof(*t->c), compare_classes);
}

const char *class_names_find(const struct class_names *t, ht_id id)
{
	/* the last row at or before id: the last name it was given */
	size_t lo = LOWER_BOUND(0, t->n, i, t->c[i].id <= id);

	return lo && t->c[lo - 1].id == id ? t->c[lo - 1].name : NULL;
}

const char *class_names_text(const struct class_names *t, ht_id id,
			     char *buf)
{
	const char *name = class_names_find(t, id);

	if (name)
		return name;
	if (!id)
		return "?";
	snprintf(buf, CLASS_TEXT_SIZE, "?0x%llx", (unsigned long long)id);
	return buf;
}

void class_names_free(struct class_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->c[i].name);
	free(t->c);
	memset(t, 0, sizeof(*t));
}
