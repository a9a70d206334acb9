/*
 * membudget.h - the one bound on the memory an input may cost a process
 * (heaptrace(1), --max-memory; heaptrace(5), LIMITS).
 *
 * The limits of the formats bound each chunk and each event, not their
 * sum: a .ht of 261 KB can describe 134 million roots, and four such
 * chunks once cost 12 GB. So the structures that grow with what an input
 * describes (what the readers decode an event into and keep of an HPROF
 * dump's index, the heap graph's columns, its references and roots, the
 * dominator tree and the other per-object arrays of the analyses, the
 * relocation tracker's blocks) charge this budget before they grow, and
 * give back what they charged when freed. Growth past the limit is
 * refused as running out of memory is, and mem_budget_exceeded() tells
 * the caller to say "needs more than N bytes" instead.
 *
 * One budget per process, as memory is: the readers, the analyses and
 * the command all answer to it without passing it around. A limit of 0
 * (the default of a library user) charges nothing.
 */
#ifndef HT_UTIL_MEMBUDGET_H
#define HT_UTIL_MEMBUDGET_H

#include "util/alloc.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a refused input is told, after its name; takes the limit (a
 * uint64_t). The option is the command's (heaptrace(1)). */
#define MEM_BUDGET_MESSAGE                                              \
	"needs more than %" PRIu64 " bytes of memory (--max-memory)"

/* Sets the limit in bytes (0: none) and forgets an earlier refusal. */
void mem_budget_set(uint64_t limit);
uint64_t mem_budget_limit(void);

/* Charges bytes: 0, or -1 (nothing charged, the refusal remembered) when
 * the total would pass the limit. */
int mem_budget_charge(uint64_t bytes);
/* Gives back bytes charged before. */
void mem_budget_release(uint64_t bytes);
/* Whether a charge was refused since the limit was set. */
bool mem_budget_exceeded(void);

/*
 * The default limit for an input of input_bytes on a machine of ram_bytes
 * (0: unknown): MEM_BUDGET_RATIO times the input, at least
 * MEM_BUDGET_FLOOR, at most three quarters of the machine's memory. A
 * real trace needs 5 to 7 times its size (a 122 MB .ht of 10 million
 * objects, 800 MB; a 376 MB HPROF dump, 635 MB); a hostile one of 1 MB
 * that asks for 12 GB is refused at 1 GiB.
 */
#define MEM_BUDGET_RATIO 64
#define MEM_BUDGET_FLOOR ((uint64_t)1 << 30)
uint64_t mem_budget_default(uint64_t input_bytes, uint64_t ram_bytes);

/* The machine's physical memory in bytes, 0 when unknown. */
uint64_t mem_budget_ram(void);

/*
 * Arrays of a fixed size (the per-object arrays of an analysis): alloc_array
 * charged to the budget first, the bytes added to *charged, NULL when
 * refused or out of memory; and their freeing, which gives n * elem bytes
 * back and takes them off *charged (p may be NULL: nothing then).
 */
void *budget_array(size_t n, size_t elem, uint64_t *charged);
void budget_array_free(void *p, size_t n, size_t elem, uint64_t *charged);
/* Gives back bytes of what *charged counts (an array shrunk). */
void budget_give_back(uint64_t bytes, uint64_t *charged);

/*
 * BUDGET_GROW(ptr, need, cap, charged): ALLOC_GROW, charging the budget
 * for the bytes the capacity grows by and adding them to `charged` (a
 * uint64_t the owner gives back with mem_budget_release when it frees
 * ptr). 0, or -1 with everything untouched.
 */
#define BUDGET_GROW(ptr, need, cap, charged)                              \
	__extension__({                                                   \
		size_t bg_before_ = (cap), bg_need_ = (need);             \
		size_t bg_after_ = bg_need_ <= bg_before_ ? bg_before_ :  \
			grown_capacity(bg_before_, bg_need_,              \
				       sizeof(*(ptr)));                   \
		uint64_t bg_more_ = (uint64_t)(bg_after_ - bg_before_) *  \
				    sizeof(*(ptr));                       \
		int bg_rc_ = -1;                                          \
		if (bg_need_ <= bg_before_) {                             \
			bg_rc_ = 0;                                       \
		} else if (bg_after_ != 0 &&                              \
			   mem_budget_charge(bg_more_) == 0) {            \
			bg_rc_ = ALLOC_GROW(ptr, bg_need_, cap);          \
			if (bg_rc_ == 0)                                  \
				(charged) += bg_more_;                    \
			else                                              \
				mem_budget_release(bg_more_);             \
		}                                                         \
		bg_rc_;                                                   \
	})

#endif
