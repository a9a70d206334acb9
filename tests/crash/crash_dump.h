/*
 * crash_dump.h - the heap dumps crash_record writes, generated from the
 * dump number alone, so that the test that kills it can tell whether each
 * dump it reads back is whole.
 */
#ifndef HT_CRASH_DUMP_H
#define HT_CRASH_DUMP_H

#include <heaptrace/trace.h>

#include <stddef.h>
#include <stdint.h>

#define CRASH_ROOTS 10u
#define CRASH_REFS 3u

/* Sizes vary so that some dumps fit one chunk and others span several. */
static inline size_t crash_objects(uint64_t dump)
{
	return 500 + (size_t)((dump * 7919) % 9000);
}

static inline ht_id crash_object_id(uint64_t dump, size_t i)
{
	return 0x10000000u + dump * 0x1000000u + (ht_id)i * 24;
}

static inline ht_id crash_class_id(size_t i)
{
	return 0x100 + i % 7;
}

/* Object i's refs: its successor, its "parent", and one far away; the
 * last object's successor is null. */
static inline void crash_refs(uint64_t dump, size_t i, ht_id refs[CRASH_REFS])
{
	size_t n = crash_objects(dump);

	refs[0] = i + 1 < n ? crash_object_id(dump, i + 1) : 0;
	refs[1] = crash_object_id(dump, i / 2);
	refs[2] = crash_object_id(dump, (i * 31) % n);
}

#endif
