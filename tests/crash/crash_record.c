/*
 * crash_record.c - records heap dumps through the shim until it is killed,
 * for the crash-safety test in test_writer.c: after each dump (C_END) it
 * waits for the writer (ht_recorder_sync) and prints the dump's number on
 * standard output. Whatever number the test read before its SIGKILL, that
 * dump and every one before it must read back whole from a file that has
 * no index. A second thread records allocations all along, so that the
 * dumps are flushed by barriers while another thread is recording.
 *
 * Usage: crash_record FILE [DUMPS [STALL_AFTER]]
 * Closes normally after DUMPS dumps. With STALL_AFTER, it stops recording
 * after printing that dump's number and sleeps until killed: nothing but
 * the dump's own flush can then have brought it to the file.
 */
#include "crash_dump.h"

#include <heaptrace/record.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_bool done;

static void *allocate(void *arg)
{
	struct ht_recorder *rec = arg;
	const struct timespec pause = { 0, 100 * 1000 };
	ht_id id = 0x700000000000u;

	while (!atomic_load(&done)) {
		for (int i = 0; i < 100; i++, id += 32)
			if (ht_object_allocated(rec, id, 0x42, 32) != HT_OK)
				return NULL;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static int record_dump(struct ht_recorder *rec, uint64_t d)
{
	ht_id roots[CRASH_ROOTS], refs[CRASH_REFS];
	uint32_t flags[CRASH_ROOTS] = { 0 };
	size_t n = crash_objects(d);
	int rc = 0;

	for (size_t i = 0; i < CRASH_ROOTS; i++)
		roots[i] = crash_object_id(d, i);
	rc |= ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	rc |= ht_begin_container(rec, HT_C_RT_THREAD, d + 1, 0);
	rc |= ht_root_references(rec, CRASH_ROOTS, roots, flags, NULL, NULL,
				 NULL, HT_RESULT_OK);
	rc |= ht_begin_container(rec, HT_C_HEAP, 0, 0);
	for (size_t i = 0; i < n; i++) {
		crash_refs(d, i, refs);
		rc |= ht_object_references(rec, crash_object_id(d, i),
					   crash_class_id(i), 24, 0, CRASH_REFS,
					   refs, NULL, -1, HT_RESULT_OK);
	}
	rc |= ht_begin_container(rec, HT_C_END, 0, 0);
	return rc;
}

static int record_gc(struct ht_recorder *rec, uint64_t d)
{
	ht_id old_start = crash_object_id(d, 0), new_start = old_start - 8;
	uint64_t length = 4096;
	int rc = 0;

	rc |= ht_gc_started(rec, (int64_t)d, 0x7, HT_GC_OTHER);
	rc |= ht_moved_references(rec, 1, &old_start, &new_start, &length);
	rc |= ht_gc_finished(rec);
	return rc;
}

int main(int argc, char **argv)
{
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "crash-test",
		.pointer_size = 8,
	};
	const struct ht_record_options options = {
		.buffer_size = 128 << 10,
		.buffers = 8,
		.compression_level = 1,
	};
	struct ht_recorder *rec;
	struct ht_error err;
	pthread_t thread;
	uint64_t dumps;
	long long stall_after;

	if (argc < 2) {
		fprintf(stderr, "usage: crash_record FILE [DUMPS]\n");
		return 2;
	}
	dumps = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000;
	stall_after = argc > 3 ? strtoll(argv[3], NULL, 10) : -1;
	rec = ht_recorder_open(argv[1], &header, &options, &err);
	if (!rec) {
		fprintf(stderr, "crash_record: %s\n", err.message);
		return 1;
	}
	if (pthread_create(&thread, NULL, allocate, rec) != 0)
		return 1;
	for (uint64_t d = 0; d < dumps; d++) {
		if (record_dump(rec, d) != 0 || ht_recorder_sync(rec) != HT_OK) {
			fprintf(stderr, "crash_record: recording failed\n");
			return 1;
		}
		printf("%llu\n", (unsigned long long)d);
		fflush(stdout);
		while ((long long)d == stall_after)
			pause();
		if (record_gc(rec, d) != 0) {
			fprintf(stderr, "crash_record: recording failed\n");
			return 1;
		}
	}
	atomic_store(&done, true);
	pthread_join(thread, NULL);
	if (ht_recorder_close(rec, &err) != HT_OK) {
		fprintf(stderr, "crash_record: %s\n", err.message);
		return 1;
	}
	return 0;
}
