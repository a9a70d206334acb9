/*
 * pass_log.c - the chunks of each pass over a .ht file, compared with the
 * first pass's (pass_log.h).
 */
#include "lib/read/pass_log.h"

#include "lib/read/source.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

void reader_log_passes(struct ht_reader *r, struct pass_log *log)
{
	r->pass_log = log;
	log->passes++;
	log->next = 0;
}

static bool same_chunk(const struct pass_chunk *c, uint64_t offset,
		       uint32_t length, uint32_t crc)
{
	return c->offset == offset && c->length == length && c->crc == crc;
}

int pass_log_note(struct pass_log *log, uint64_t offset, uint32_t length,
		  uint32_t crc)
{
	if (log->passes > 1) {
		/* every pass reads the chunks in file order from the first,
		 * so the next one read is the next one noted */
		if (log->next == log->n)
			return 0; /* past where the first pass stopped */
		if (!same_chunk(&log->chunk[log->next], offset, length, crc)) {
			log->changed = true;
			return 1;
		}
		log->next++;
		return 0;
	}
	if (BUDGET_GROW(log->chunk, log->n + 1, log->cap, log->charged) < 0)
		return -1;
	log->chunk[log->n++] = (struct pass_chunk){offset, length, crc};
	return 0;
}

void pass_log_free(struct pass_log *log)
{
	free(log->chunk);
	mem_budget_release(log->charged);
	memset(log, 0, sizeof(*log));
}
