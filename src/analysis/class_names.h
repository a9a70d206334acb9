/*
 * class_names.h - the names a trace gives its classes (class events),
 * for the answers that name the classes of objects they follow through
 * a replay rather than through a dump's graph (history.h, the check
 * command). The last name given to an id wins.
 */
#ifndef HT_CLASS_NAMES_H
#define HT_CLASS_NAMES_H

#include <heaptrace/trace.h>

#include <stddef.h>

struct class_name;

/* This struct is not an API; it may change from one release to the
 * next. */
struct class_names {
	struct class_name *c;
	size_t n, cap;
};

/* Remembers a class event's name (a copy); one without a name is left
 * out. 0, or -1 when out of memory. */
int class_names_add(struct class_names *t, const struct ht_ev_class *e);

/* Puts the table in order for the look-ups below, once every name is in. */
void class_names_sort(struct class_names *t);

/* The last name the trace gave the class, NULL if none. */
const char *class_names_find(const struct class_names *t, ht_id id);

/* "System.String", "?0x100", or "?" when the class is not known; buf
 * holds CLASS_TEXT_SIZE bytes. */
#define CLASS_TEXT_SIZE 32
const char *class_names_text(const struct class_names *t, ht_id id,
			     char *buf);

void class_names_free(struct class_names *t);

#endif
