/*
 * top.h - the k biggest objects of a dump, as `heaptrace top` lists them:
 * by retained or by self size, among all objects or the instances of one
 * class. (The classes themselves are ranked by class_table, stats.h.)
 * Only computes; the command renders.
 */
#ifndef HT_TOP_H
#define HT_TOP_H

#include "analysis/dominators.h"
#include "analysis/heap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The first k objects of h in listing order into best[0..k): larger key
 * first, ties by lower id (objects are sorted by id, so lower index). The
 * key is retained[i] when retained is given (heap_dominators' retained),
 * else the self size (heap_size). With in_class (a flag per class slot,
 * top_class_slots), only the objects of the slots flagged are ranked.
 * best must hold k; fewer are filled when fewer objects are ranked, so
 * k should be at most their count. Costs n log k, so that top -n 20 of
 * ten million objects stays fast.
 */
void top_objects(const struct heap *h, const uint64_t *retained,
		 const bool *in_class, uint32_t *best, size_t k);

/*
 * The class slots named name (several when class loaders load classes of
 * one name): *in_class, a flag per slot (n_classes + 1 of them, so that
 * heap_class_slot's slot for no class is one), freed by the caller, and
 * *n_instances, their objects. 0, or -1 when out of memory.
 */
int top_class_slots(const struct heap *h, const char *name, bool **in_class,
		    uint64_t *n_instances);

#endif
