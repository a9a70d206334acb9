/*
 * testutil.h - helpers shared by the unit tests: temporary files, test
 * data paths, random numbers, and whether a sanitizer is on.
 */
#ifndef HT_TESTUTIL_H
#define HT_TESTUTIL_H

#include <heaptrace/trace.h>

#include <stddef.h>
#include <stdint.h>

/* 1 under AddressSanitizer or UndefinedBehaviorSanitizer: a test of the
 * address space or of sheer size is no test there (the shadow reserves
 * terabytes, and everything runs several times slower). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || \
	__has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* A fresh path in a private temporary directory (removed at exit). The
 * returned string is static storage, one per call, never freed. */
const char *tmp_path(const char *name);

/* Writes text to a fresh temporary file and returns its path. */
const char *tmp_file_with(const char *name, const void *data, size_t len);

/* Reads a whole file into malloc'd memory; *len set. NULL on failure. */
void *read_whole_file(const char *path, size_t *len);

/* A reproducible stream of random numbers (splitmix64) for tests that try
 * many random inputs: test_random_seed starts it over from a seed. */
void test_random_seed(uint64_t seed);
uint64_t test_random(void);

/* Path of a file under testdata/ (from $HT_TESTDATA). */
const char *testdata(const char *name);

#endif
