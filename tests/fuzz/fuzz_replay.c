/*
 * fuzz_replay.c - fuzz target: any input a reader accepts (.ht, YAML or
 * HPROF, sniffed as ht_reader_open does), replayed and analysed, every
 * answer checked (fuzz_analyses.c).
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_replay_and_analyse(data, size, FUZZ_SNIFF);
	return 0;
}
