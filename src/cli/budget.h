/*
 * budget.h - `heaptrace diff --fail-if EXPR`: budgets that fail a build.
 * An expression names a figure of the diff and a condition on it; when
 * the condition holds, the budget is broken and diff exits 1.
 *
 * The grammar (heaptrace-diff(1), BUDGETS, says the same):
 *
 *   EXPR    = SUBJECT [ "." METRIC ] OP VALUE
 *   SUBJECT = "total" | "class:" NAME | "retained:" NAME | "object:" ID
 *           | "waste:" WASTE | "site:" METHOD
 *   WASTE   = "duplicate-strings" | "duplicate-arrays"
 *           | "empty-collections" | "sparse-collections"
 *   METRIC  = "count" | "bytes" | "retained" | "live" | "allocated"
 *   OP      = ">" | ">=" | "<" | "<=" | "=" | "=="
 *   VALUE   = NUMBER [ UNIT ]                  the figure after
 *           | ( "+" | "-" ) NUMBER [ UNIT ]    its change from before
 *           | ( "+" | "-" ) NUMBER "%"         its change in percent of before
 *   NUMBER  = DIGITS [ "." DIGITS ]
 *   UNIT    = B | kB | MB | GB | TB (powers of 1000)
 *           | KiB | MiB | GiB | TiB (powers of 1024), any case
 *
 * The operator is the last one in the expression (values hold none of
 * < > =), so a class name may hold < and >. The metric defaults to bytes
 * for total, count for class:, retained for retained: (the only one it
 * has) and object:, bytes for waste:. A waste: figure is what `waste`
 * says of the dump (analysis/waste.h): bytes wasted, or count, the copies
 * beyond one a group (the empty or sparse collections); it has no
 * retained. A site: figure is what `sites` says of the allocating method
 * METHOD (its name, without file or line) in each dump: live (the
 * default: bytes of its objects in the dump), count (those objects),
 * retained or allocated, estimates rounded when the stacks were sampled;
 * live and allocated are a site's alone. A unit needs a metric in bytes.
 * A change in percent from 0 is infinitely large (and 0 from 0 to 0).
 */
#ifndef HT_BUDGET_H
#define HT_BUDGET_H

#include "analysis/diff.h"
#include "analysis/sites.h"
#include "analysis/waste.h"

#include <stdbool.h>
#include <stddef.h>

enum budget_subject {
	BUDGET_TOTAL,
	BUDGET_CLASS,     /* class:NAME */
	BUDGET_RETAINED,  /* retained:NAME, a class's retained bytes */
	BUDGET_OBJECT,    /* object:ID */
	BUDGET_WASTE,     /* waste:KIND, a figure of `waste` */
	BUDGET_SITE,      /* site:METHOD, a figure of `sites` */
};

enum budget_waste {
	BUDGET_DUPLICATE_STRINGS,
	BUDGET_DUPLICATE_ARRAYS,
	BUDGET_EMPTY_COLLECTIONS,
	BUDGET_SPARSE_COLLECTIONS,
};

enum budget_op {
	BUDGET_GT,
	BUDGET_GE,
	BUDGET_LT,
	BUDGET_LE,
	BUDGET_EQ,
};

enum budget_value {
	BUDGET_AFTER,     /* NUMBER: the figure after */
	BUDGET_CHANGE,    /* +N, -N: after - before */
	BUDGET_PERCENT,   /* +N%, -N%: (after - before) / before * 100 */
};

/* This struct is not an API; it may change from one release to the next. */
struct budget {
	const char *text;          /* the expression as given (borrowed) */
	enum budget_subject subject;
	char *name;                /* BUDGET_CLASS, BUDGET_RETAINED,
				      BUDGET_SITE */
	ht_id id;                  /* BUDGET_OBJECT */
	enum budget_waste waste;   /* BUDGET_WASTE */
	enum diff_metric metric;
	enum budget_op op;
	enum budget_value kind;
	long double value;         /* in bytes or objects, signed for changes */
};

/*
 * Parses text into b. 0; -1 with why (at least 256 bytes) saying what is
 * wrong and quoting the offending part; or BUDGET_NO_MEMORY, which is no
 * fault of the text. Free with budget_free.
 */
#define BUDGET_NO_MEMORY (-2)
int budget_parse(const char *text, struct budget *b, char *why, size_t len);
void budget_free(struct budget *b);

/* Whether the budget is broken by these figures. */
bool budget_broken(const struct budget *b, struct diff_value v);

/* The budget's figures in d; false when they name a class that neither
 * dump has (the figures are then 0). */
bool budget_figures(const struct budget *b, const struct diff *d,
		    struct diff_value *v);

/* Whether the budget names a waste: figure, which needs the dumps'
 * values and waste_compute on both. */
bool budget_needs_waste(const struct budget *b);

/* Whether the budget names a site: figure, which needs the dumps' sites
 * (sites_find at depth 1 on both, and sites_compare). */
bool budget_needs_sites(const struct budget *b);

/* The site: figure of the budget from the sites' changes; false when no
 * site of either dump has the method (the figures are then 0). */
bool budget_site_figures(const struct budget *b,
			 const struct site_change *changes, size_t n,
			 struct diff_value *v);

/* The waste: figure of the budget, from the totals before and after. */
void budget_waste_figures(const struct budget *b,
			  const struct waste_totals *before,
			  const struct waste_totals *after,
			  struct diff_value *v);

/* "1,200 → 1,400 (+200, +16.7%)": the figures of a budget, in a buffer of
 * fixed size, so that saying a budget was broken needs no memory. */
#define BUDGET_FIGURES_TEXT 160
const char *budget_figures_text(const struct budget *b, struct diff_value v,
				char buf[BUDGET_FIGURES_TEXT]);

/* "class:Foo.count>+10%: 1,200 → 1,400 (+200, +16.7%)"; buf at least
 * BUDGET_FIGURES_TEXT bytes plus the expression's length. */
const char *budget_describe(const struct budget *b, struct diff_value v,
			    char *buf, size_t len);

/* A SIZE, NUMBER [UNIT] as in a budget's VALUE ("512MiB", "2GB"), into
 * *bytes, at least 1: 0, or -1 when it is not one. What --max-memory
 * takes too. */
int parse_size(const char *text, uint64_t *bytes);

/* "count", "bytes", "retained". */
const char *budget_metric_name(enum diff_metric m);

#endif
