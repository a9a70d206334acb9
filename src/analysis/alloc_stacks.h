/*
 * alloc_stacks.h - the methods and stacks a trace declares (format
 * version 4: `method` with its file and line, `stack`), kept from a
 * replay so that an allocation's stack can be read by its id: what
 * sites.h groups into sites, and what history and object print under an
 * object's allocation.
 */
#ifndef HT_ALLOC_STACKS_H
#define HT_ALLOC_STACKS_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A method as the trace declared it (the first declaration of an id
 * stays). */
struct alloc_method {
	ht_id id;
	char *name, *file;        /* NULL when not given */
	uint32_t line;            /* 0 when not given */
	size_t seq;               /* its place in the trace's order */
};

/* A stack: frames[first .. first + count) of the table, the allocating
 * method first. group is its user's (sites.c). */
struct alloc_stack {
	ht_id id;
	size_t first, count;
	size_t seq;               /* its place in the trace's order */
	uint32_t group;
};

/* This struct is not an API; it may change from one release to the
 * next. Filled in trace order by alloc_stacks_note, then sorted by id
 * once (alloc_stacks_finish) for the lookups. */
struct alloc_stacks {
	struct alloc_method *methods;
	size_t n_methods, cap_methods;
	struct alloc_stack *stacks;
	size_t n_stacks, cap_stacks;
	ht_id *frames;
	size_t n_frames, cap_frames;
};

/* Notes a method or stack event (others are ignored): 0, or -1 when out
 * of memory. */
int alloc_stacks_note(struct alloc_stacks *t, const struct ht_event *ev);
/* After the replay: sorts by id, keeping each id's first declaration. */
void alloc_stacks_finish(struct alloc_stacks *t);
/* NULL when the trace never declared the id. */
const struct alloc_method *alloc_stacks_method(const struct alloc_stacks *t,
					       ht_id id);
struct alloc_stack *alloc_stacks_stack(const struct alloc_stacks *t,
				       ht_id id);
void alloc_stacks_free(struct alloc_stacks *t);

/* A frame named as a stack trace names it: "Demo.Keep(Demo.cs:10)",
 * "Demo.Keep(Demo.cs)", "Demo.Keep", or "method 0x41" for a method the
 * trace never named (method NULL). malloc'ed; NULL when out of memory.
 * What a dump's frames (threads) and a flame graph's are called. */
char *alloc_frame_name(const char *method, ht_id id, const char *file,
		       uint32_t line);

#endif
