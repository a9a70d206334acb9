/*
 * membudget.c - the process's memory budget (membudget.h): a limit and
 * what is charged against it. The analyses and the readers charge it from
 * the caller's thread (a reader that inflates ahead, read_ahead, notes its
 * pass log as the scan takes each chunk); the counts are atomic all the
 * same, so that no thread a library starts can tear them.
 */
#include "util/membudget.h"

#include <stdlib.h>
#include <unistd.h>

static uint64_t limit, used;
static bool exceeded;

void mem_budget_set(uint64_t bytes)
{
	limit = bytes;
	exceeded = false;
}

uint64_t mem_budget_limit(void)
{
	return limit;
}

int mem_budget_charge(uint64_t bytes)
{
	uint64_t was = __atomic_load_n(&used, __ATOMIC_RELAXED), now;

	do {
		if (limit && (was > limit || bytes > limit - was)) {
			__atomic_store_n(&exceeded, true, __ATOMIC_RELAXED);
			return -1;
		}
		now = was + bytes;
	} while (!__atomic_compare_exchange_n(&used, &was, now, true,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

void mem_budget_release(uint64_t bytes)
{
	uint64_t was = __atomic_load_n(&used, __ATOMIC_RELAXED), now;

	do
		now = bytes > was ? 0 : was - bytes;
	while (!__atomic_compare_exchange_n(&used, &was, now, true,
					    __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}

bool mem_budget_exceeded(void)
{
	return __atomic_load_n(&exceeded, __ATOMIC_RELAXED);
}

void *budget_array(size_t n, size_t elem, uint64_t *charged)
{
	uint64_t bytes = (uint64_t)(n ? n : 1) * elem;
	void *p;

	if (elem && n > SIZE_MAX / elem)
		return NULL;
	if (mem_budget_charge(bytes) < 0)
		return NULL;
	p = alloc_array(n, elem);
	if (!p) {
		mem_budget_release(bytes);
		return NULL;
	}
	*charged += bytes;
	return p;
}

void budget_give_back(uint64_t bytes, uint64_t *charged)
{
	if (bytes > *charged)
		bytes = *charged;
	mem_budget_release(bytes);
	*charged -= bytes;
}

void budget_array_free(void *p, size_t n, size_t elem, uint64_t *charged)
{
	if (!p)
		return;
	free(p);
	budget_give_back((uint64_t)(n ? n : 1) * elem, charged);
}

uint64_t mem_budget_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);

	if (pages <= 0 || size <= 0)
		return 0;
	return (uint64_t)pages * (uint64_t)size;
}

uint64_t mem_budget_default(uint64_t input_bytes, uint64_t ram_bytes)
{
	uint64_t b = input_bytes > UINT64_MAX / MEM_BUDGET_RATIO
			     ? UINT64_MAX
			     : input_bytes * MEM_BUDGET_RATIO;

	if (b < MEM_BUDGET_FLOOR)
		b = MEM_BUDGET_FLOOR;
	if (ram_bytes && b > ram_bytes / 4 * 3)
		b = ram_bytes / 4 * 3;
	return b;
}
