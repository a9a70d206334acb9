/*
 * tiny_profiler.c - a profiler in miniature, built against the installed
 * libheaptrace through pkg-config: it records what a runtime's callbacks
 * would deliver for one GC and one heap dump.
 */
#include <heaptrace/record.h>

#include <stdio.h>

int main(int argc, char **argv)
{
	struct ht_header header = {
		.runtime = "tiny",
		.pointer_size = 8,
		.reports_survivors = true,
	};
	const ht_id old_starts[] = {0x1000}, new_starts[] = {0x800};
	const uint64_t lengths[] = {0x40};
	const ht_id roots[] = {0x800};
	const uint32_t root_flags[] = {0};
	const ht_id refs[] = {0x820, 0};
	struct ht_recorder *rec;
	struct ht_error err;

	if (argc != 2) {
		fprintf(stderr, "usage: tiny_profiler OUT.ht\n");
		return 2;
	}
	rec = ht_recorder_open(argv[1], &header, NULL, &err);
	if (!rec) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	ht_class(rec, 0x10, "Node", true, 32);
	ht_gc_started(rec, 0, 1u << 0, HT_GC_INDUCED);
	ht_moved_references(rec, 1, old_starts, new_starts, lengths);
	ht_gc_finished(rec);
	ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	ht_begin_container(rec, HT_C_RT_THREAD, 1, 0);
	ht_root_references(rec, 1, roots, root_flags, NULL, NULL, NULL,
			   HT_RESULT_OK);
	ht_begin_container(rec, HT_C_HEAP, 0, 0);
	ht_object_references(rec, 0x800, 0x10, 32, 0, 2, refs, NULL, -1,
			     HT_RESULT_OK);
	ht_object_references(rec, 0x820, 0x10, 32, 0, 0, NULL, NULL, -1,
			     HT_RESULT_OK);
	ht_begin_container(rec, HT_C_END, 0, 0);
	if (ht_recorder_close(rec, &err) != HT_OK) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	return 0;
}
