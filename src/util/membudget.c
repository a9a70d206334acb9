/*
 * membudget.c - the process's memory budget (membudget.h): a limit and
 * what is charged against it. No locking: the analyses that charge it
 * run on one thread.
 */
#include "util/membudget.h"

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
	if (limit && (used > limit || bytes > limit - used)) {
		exceeded = true;
		return -1;
	}
	used += bytes;
	return 0;
}

void mem_budget_release(uint64_t bytes)
{
	used = bytes > used ? 0 : used - bytes;
}

bool mem_budget_exceeded(void)
{
	return exceeded;
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
