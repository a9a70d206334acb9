/*
 * describe.h - how the analysis commands name things for people and for
 * programs: sizes ("1.2 MiB"), roots ("C_RT_JIT 0x7ff0 in thread main
 * (Shop.main)"), generations, and the per-class table that stats and top
 * share.
 */
#ifndef HT_DESCRIBE_H
#define HT_DESCRIBE_H

#include "cli/output.h"

#include "analysis/heap.h"
#include "util/humanize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* human_size, signed_size and SIZE_TEXT: util/humanize.h */
/* "512 B", "1258291 B (1.2 MiB)": always exact. */
const char *exact_size(uint64_t bytes, char *buf);

/* "0x1f00" into buf (at least 24 bytes). */
const char *hex_id(ht_id id, char *buf);

/* Column widths: grows *w to fit a number, a human_size, a hex_id. */
void widen(int *w, int x);
void widen_number(int *w, uint64_t n);
void widen_size(int *w, uint64_t bytes);
void widen_id(int *w, ht_id id);

/* "0", "1", "2", "LOH", "POH", "unknown"; buf holds 16 bytes. */
const char *generation_name(unsigned generation, char *buf);

/* One line for people: "C_RT_JIT 0x7ff0 in thread main (Shop.main)",
 * "C_RT_CLASS 0x500 (Shop)", "stack root 0x7ffe1000 [weak]". */
const char *describe_root(const struct heap *h, const struct heap_root *r,
			  char *buf, size_t len);

/* The same for programs, as an object under key: container or kind, ids,
 * thread, method, class, CLR root id and flags, weak. */
void out_root(struct out *o, const char *key, const struct heap *h,
	      const struct heap_root *r);

/* ---- per class ----------------------------------------------------------- */

struct class_row {
	uint32_t cls;         /* index into h->classes, HEAP_NO_CLASS */
	ht_id id;             /* the class id, 0 when unknown */
	char *name;           /* a copy of heap_class_name's */
	uint64_t count;
	uint64_t bytes;       /* self sizes */
	uint64_t retained;    /* see class_retained */
};

enum class_order {
	BY_BYTES,
	BY_RETAINED,
	BY_COUNT,
};

/*
 * Counts and self bytes per class. With d, also each class's retained
 * size: the sum of the retained sizes of its objects that no other object
 * of the same class dominates (so a linked list's nodes are not counted
 * once per node above them). Sorted by order, descending, ties by name
 * then class id. Returns 0, or -1 when out of memory.
 */
int class_table(const struct heap *h, const struct heap_dominators *d,
		enum class_order order, struct class_row **rows, size_t *n);
void class_table_free(struct class_row *rows, size_t n);

#endif
