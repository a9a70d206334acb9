/*
 * budget.c - parsing budget expressions, checking them against a diff,
 * and saying how one was broken (budget.h has the grammar).
 *
 * Numbers are kept as long double: a byte count below 2^63 is exact in
 * its 64-bit mantissa, and a threshold such as 1.5MB or +16.7% needs a
 * fraction.
 */
#include "cli/budget.h"

#include "util/alloc.h"
#include "util/grouped.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const metric_names[] = {
	[DIFF_COUNT] = "count",
	[DIFF_BYTES] = "bytes",
	[DIFF_RETAINED] = "retained",
	[DIFF_LIVE] = "live",
	[DIFF_ALLOCATED] = "allocated",
};

static const struct {
	const char *name;
	long double factor;
} units[] = {
	{"B", 1.0L},
	{"kB", 1e3L}, {"MB", 1e6L}, {"GB", 1e9L}, {"TB", 1e12L},
	{"KiB", 1024.0L}, {"MiB", 1048576.0L}, {"GiB", 1073741824.0L},
	{"TiB", 1099511627776.0L},
};

#define N_UNITS ARRAY_SIZE(units)
#define MAX_DIGITS 30

const char *budget_metric_name(enum diff_metric m)
{
	return metric_names[m];
}

static int fail(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static bool is_op_char(char c)
{
	return c == '<' || c == '>' || c == '=';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- the operator ------------------------------------------------------- */

/*
 * The last operator of text: it ends at the last of < > =; a '=' after
 * one of those makes it two characters. *start and *end delimit it.
 */
static int find_op(const char *text, struct budget *b, size_t *start,
		   size_t *end, char *why, size_t len)
{
	const char *last = NULL;
	size_t i;

	for (const char *p = text; *p; p++)
		if (is_op_char(*p))
			last = p;
	if (!last)
		return fail(why, len, "no comparison (>, >=, <, <=, =) in it");
	i = (size_t)(last - text);
	*end = i + 1;
	*start = i;
	if (*last == '=' && i > 0 && is_op_char(text[i - 1]))
		(*start)--;
	/* "=>", "<>", "!=", "===": no operator of ours, and no class name
	 * ends like that */
	if (*start > 0 && strchr("=<!", text[*start - 1]))
		return fail(why, len, "'%.*s' is not a comparison: use >, >=, "
			    "<, <= or =", (int)(*end - *start + 1),
			    text + *start - 1);
	switch (text[*start]) {
	case '>':
		b->op = *end - *start == 2 ? BUDGET_GE : BUDGET_GT;
		break;
	case '<':
		b->op = *end - *start == 2 ? BUDGET_LE : BUDGET_LT;
		break;
	default:
		b->op = BUDGET_EQ;
	}
	return 0;
}

/* ---- the subject and metric --------------------------------------------- */

static bool take_metric(const char *left, size_t *n, enum diff_metric *m)
{
	const char *dot = NULL;

	for (size_t i = 0; i < *n; i++)
		if (left[i] == '.')
			dot = left + i;
	if (!dot)
		return false;
	for (size_t k = 0; k < ARRAY_SIZE(metric_names); k++) {
		size_t len = strlen(metric_names[k]);

		if ((size_t)(left + *n - dot - 1) == len &&
		    strncmp(dot + 1, metric_names[k], len) == 0) {
			*m = (enum diff_metric)k;
			*n = (size_t)(dot - left);
			return true;
		}
	}
	return false;
}

static bool has_prefix(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && strncmp(s, prefix, k) == 0;
}

static int parse_id(const char *s, size_t n, ht_id *id)
{
	char buf[32], *end;
	int base = 10;
	const char *p = buf;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p || *p == '-' || *p == '+' || *p == ' ')
		return -1;
	errno = 0;
	*id = strtoull(p, &end, base);
	return errno || *end ? -1 : 0;
}

static const char *const waste_names[] = {
	[BUDGET_DUPLICATE_STRINGS] = "duplicate-strings",
	[BUDGET_DUPLICATE_ARRAYS] = "duplicate-arrays",
	[BUDGET_EMPTY_COLLECTIONS] = "empty-collections",
	[BUDGET_SPARSE_COLLECTIONS] = "sparse-collections",
};

/* waste:KIND, the KIND of n bytes at s */
static int parse_waste(const char *s, size_t n, struct budget *b, char *why,
		       size_t len)
{
	b->subject = BUDGET_WASTE;
	for (size_t k = 0; k < ARRAY_SIZE(waste_names); k++) {
		if (strlen(waste_names[k]) == n &&
		    strncmp(s, waste_names[k], n) == 0) {
			b->waste = (enum budget_waste)k;
			return 0;
		}
	}
	return fail(why, len, "'waste:%.*s' is no figure of waste: "
		    "waste:duplicate-strings, waste:duplicate-arrays, "
		    "waste:empty-collections or waste:sparse-collections",
		    (int)n, s);
}

static int parse_subject(const char *left, size_t n, struct budget *b,
			 char *why, size_t len)
{
	const char *name = NULL;
	size_t name_len = 0;

	if (n == 5 && strncmp(left, "total", 5) == 0) {
		b->subject = BUDGET_TOTAL;
		return 0;
	}
	if (has_prefix(left, n, "class:")) {
		b->subject = BUDGET_CLASS;
		name = left + 6;
		name_len = n - 6;
	} else if (has_prefix(left, n, "retained:")) {
		b->subject = BUDGET_RETAINED;
		name = left + 9;
		name_len = n - 9;
	} else if (has_prefix(left, n, "site:")) {
		b->subject = BUDGET_SITE;
		name = left + 5;
		name_len = n - 5;
		if (name_len == 0)
			return fail(why, len, "'site:' needs the allocating "
				    "method's name, as sites --depth 1 "
				    "prints it");
	} else if (has_prefix(left, n, "waste:")) {
		return parse_waste(left + 6, n - 6, b, why, len);
	} else if (has_prefix(left, n, "object:")) {
		b->subject = BUDGET_OBJECT;
		if (n == 7)
			return fail(why, len, "'object:' needs an object id");
		if (parse_id(left + 7, n - 7, &b->id) < 0)
			return fail(why, len, "'%.*s' is not an object id "
				    "(decimal or 0x hex)", (int)(n - 7),
				    left + 7);
		return 0;
	} else if (n == 0) {
		return fail(why, len, "no subject before the comparison: "
			    "total, class:NAME, retained:NAME, object:ID, "
			    "waste:KIND or site:METHOD");
	} else {
		return fail(why, len, "'%.*s' is not a subject: total, "
			    "class:NAME, retained:NAME, object:ID, "
			    "waste:KIND or site:METHOD, then optionally "
			    ".count, .bytes or .retained (a site: .live, "
			    ".count, .retained or .allocated)",
			    (int)n, left);
	}
	if (name_len == 0)
		return fail(why, len, "'%.*s' needs a class name", (int)n,
			    left);
	b->name = strndup(name, name_len);
	if (!b->name) {
		fail(why, len, "out of memory");
		return BUDGET_NO_MEMORY;
	}
	return 0;
}

static enum diff_metric default_metric(enum budget_subject s)
{
	switch (s) {
	case BUDGET_TOTAL:
	case BUDGET_WASTE:
		return DIFF_BYTES;
	case BUDGET_CLASS:
		return DIFF_COUNT;
	case BUDGET_SITE:
		return DIFF_LIVE;
	case BUDGET_RETAINED:
	case BUDGET_OBJECT:
		break;
	}
	return DIFF_RETAINED;
}

/* ---- the value ---------------------------------------------------------- */

/* DIGITS [. DIGITS] at s; *end after it. */
static int parse_number(const char *s, long double *v, const char **end)
{
	long double x = 0.0L, scale = 1.0L;
	const char *p = s;
	int digits = 0;

	for (; is_digit(*p); p++, digits++)
		x = x * 10.0L + (*p - '0');
	if (digits == 0)
		return -1;
	if (*p == '.') {
		if (!is_digit(*++p))
			return -1;
		for (; is_digit(*p); p++, digits++) {
			x = x * 10.0L + (*p - '0');
			scale *= 10.0L;
		}
	}
	if (digits > MAX_DIGITS)
		return -1;
	*v = x / scale;
	*end = p;
	return 0;
}

static int unit_factor(const char *unit, long double *factor)
{
	for (size_t i = 0; i < N_UNITS; i++) {
		if (strcasecmp(unit, units[i].name) == 0) {
			*factor = units[i].factor;
			return 0;
		}
	}
	return -1;
}

int parse_size(const char *text, uint64_t *bytes)
{
	long double v, factor = 1.0L;
	const char *unit;

	if (parse_number(text, &v, &unit) < 0 ||
	    (*unit && unit_factor(unit, &factor) < 0))
		return -1;
	v *= factor;
	if (v < 1.0L || v >= 18446744073709551616.0L)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

static bool in_bytes(enum diff_metric m)
{
	return m != DIFF_COUNT;
}

static int parse_value(const char *right, struct budget *b, char *why,
		       size_t len)
{
	const char *p = right, *unit;
	long double sign = 1.0L, factor = 1.0L;

	b->kind = BUDGET_AFTER;
	if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1.0L : 1.0L;
		b->kind = BUDGET_CHANGE;
		p++;
	}
	if (parse_number(p, &b->value, &unit) < 0)
		return fail(why, len, "'%s' is not a number (such as 12, 1.5, "
			    "+10, -2MB or +5%%)", right);
	if (strcmp(unit, "%") == 0) {
		if (b->kind != BUDGET_CHANGE)
			return fail(why, len, "a percentage is a change: "
				    "write +%s or -%s", right, right);
		b->kind = BUDGET_PERCENT;
	} else if (*unit) {
		if (unit_factor(unit, &factor) < 0)
			return fail(why, len, "'%s' is not a unit: B, kB, MB, "
				    "GB, TB (powers of 1000) or KiB, MiB, GiB, "
				    "TiB (of 1024)", unit);
		if (!in_bytes(b->metric))
			return fail(why, len, "'%s' is in bytes, but the "
				    "metric is count: add .bytes or .retained",
				    right);
	}
	b->value *= sign * factor;
	return 0;
}

/* ---- parse -------------------------------------------------------------- */

int budget_parse(const char *text, struct budget *b, char *why, size_t len)
{
	size_t start = 0, end = 0, n;
	bool explicit_metric;
	enum diff_metric m = DIFF_COUNT;
	int rc;

	memset(b, 0, sizeof(*b));
	b->text = text;
	if (find_op(text, b, &start, &end, why, len) < 0)
		return -1;
	if (!text[end])
		return fail(why, len, "nothing to compare with after '%.*s'",
			    (int)(end - start), text + start);
	n = start;
	explicit_metric = take_metric(text, &n, &m);
	rc = parse_subject(text, n, b, why, len);
	if (rc < 0)
		goto fail;
	b->metric = explicit_metric ? m : default_metric(b->subject);
	if (b->subject == BUDGET_RETAINED && b->metric != DIFF_RETAINED) {
		rc = fail(why, len, "retained:%s measures retained bytes only: "
			  "class:%s.%s is its %s", b->name, b->name,
			  metric_names[b->metric], metric_names[b->metric]);
		goto fail;
	}
	if ((b->metric == DIFF_LIVE || b->metric == DIFF_ALLOCATED) &&
	    b->subject != BUDGET_SITE) {
		rc = fail(why, len, ".%s is a figure of an allocation site: "
			  "site:METHOD.%s", metric_names[b->metric],
			  metric_names[b->metric]);
		goto fail;
	}
	if (b->subject == BUDGET_SITE && b->metric == DIFF_BYTES) {
		rc = fail(why, len, "site:%s has .live (its objects' bytes in "
			  "the dump), .count, .retained or .allocated",
			  b->name);
		goto fail;
	}
	if (b->subject == BUDGET_WASTE && b->metric == DIFF_RETAINED) {
		rc = fail(why, len, "waste:%s has no retained size: .bytes "
			  "(wasted) or .count", waste_names[b->waste]);
		goto fail;
	}
	rc = parse_value(text + end, b, why, len);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	budget_free(b);
	return rc;
}

void budget_free(struct budget *b)
{
	free(b->name);
	b->name = NULL;
}

/* ---- checking ----------------------------------------------------------- */

static bool compare(long double x, enum budget_op op, long double y)
{
	switch (op) {
	case BUDGET_GT:
		return x > y;
	case BUDGET_GE:
		return x >= y;
	case BUDGET_LT:
		return x < y;
	case BUDGET_LE:
		return x <= y;
	case BUDGET_EQ:
		break;
	}
	return x == y;
}

bool budget_broken(const struct budget *b, struct diff_value v)
{
	long double before = (long double)v.before;
	long double after = (long double)v.after;

	switch (b->kind) {
	case BUDGET_AFTER:
		return compare(after, b->op, b->value);
	case BUDGET_CHANGE:
		return compare(after - before, b->op, b->value);
	case BUDGET_PERCENT:
		break;
	}
	if (v.before == 0) {
		/* from nothing: no growth, or more than any percentage */
		if (v.after == 0)
			return compare(0.0L, b->op, b->value);
		return b->op == BUDGET_GT || b->op == BUDGET_GE;
	}
	/* change / before * 100 OP value, without the division */
	return compare((after - before) * 100.0L, b->op, b->value * before);
}

bool budget_figures(const struct budget *b, const struct diff *d,
		    struct diff_value *v)
{
	switch (b->subject) {
	case BUDGET_TOTAL:
		diff_total(d, b->metric, v);
		return true;
	case BUDGET_CLASS:
	case BUDGET_RETAINED:
		return diff_class_value(d, b->name, b->metric, v);
	case BUDGET_WASTE:
	case BUDGET_SITE:
		/* budget_waste_figures and budget_site_figures give them:
		 * no diff has them */
		v->before = v->after = 0;
		return true;
	case BUDGET_OBJECT:
		break;
	}
	diff_object_value(d, b->id, b->metric, v);
	return true;
}

bool budget_needs_waste(const struct budget *b)
{
	return b->subject == BUDGET_WASTE;
}

bool budget_needs_sites(const struct budget *b)
{
	return b->subject == BUDGET_SITE;
}

bool budget_site_figures(const struct budget *b,
			 const struct site_change *changes, size_t n,
			 struct diff_value *v)
{
	bool found = false;

	v->before = v->after = 0;
	for (size_t i = 0; i < n; i++) {
		const struct site_change *c = &changes[i];

		if (!c->n_frames || !c->frames[0].method ||
		    strcmp(c->frames[0].method, b->name) != 0)
			continue;
		found = true;
		switch (b->metric) {
		case DIFF_COUNT:
			v->before += c->live_objects_before;
			v->after += c->live_objects_after;
			break;
		case DIFF_RETAINED:
			v->before += c->retained_before;
			v->after += c->retained_after;
			break;
		case DIFF_ALLOCATED:
			v->before += c->allocated_before;
			v->after += c->allocated_after;
			break;
		default:
			v->before += c->live_before;
			v->after += c->live_after;
			break;
		}
	}
	return found;
}

static uint64_t waste_figure(const struct budget *b,
			     const struct waste_totals *t)
{
	bool count = b->metric == DIFF_COUNT;

	switch (b->waste) {
	case BUDGET_DUPLICATE_STRINGS:
		return count ? t->string_copies : t->string_bytes;
	case BUDGET_DUPLICATE_ARRAYS:
		return count ? t->array_copies : t->array_bytes;
	case BUDGET_EMPTY_COLLECTIONS:
		return count ? t->empty_collections : t->empty_bytes;
	case BUDGET_SPARSE_COLLECTIONS:
		break;
	}
	return count ? t->sparse_collections : t->sparse_bytes;
}

void budget_waste_figures(const struct budget *b,
			  const struct waste_totals *before,
			  const struct waste_totals *after,
			  struct diff_value *v)
{
	v->before = waste_figure(b, before);
	v->after = waste_figure(b, after);
}

/* ---- saying it ---------------------------------------------------------- */

const char *budget_figures_text(const struct budget *b, struct diff_value v,
				char buf[BUDGET_FIGURES_TEXT])
{
	const char *unit = in_bytes(b->metric) ? " B" : "";
	char before[32], after[32], change[32], pct[32] = "";
	int64_t c = diff_change(v);

	grouped(v.before, before);
	grouped(v.after, after);
	grouped(c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c, change);
	if (v.before && c)
		snprintf(pct, sizeof(pct), ", %+.1f%%",
			 (double)c * 100.0 / (double)v.before);
	else if (v.before)
		snprintf(pct, sizeof(pct), ", 0.0%%");
	snprintf(buf, BUDGET_FIGURES_TEXT, "%s%s \xe2\x86\x92 %s%s (%s%s%s%s)",
		 before, unit, after, unit, c > 0 ? "+" : c < 0 ? "-" : "",
		 change, unit, pct);
	return buf;
}

const char *budget_describe(const struct budget *b, struct diff_value v,
			    char *buf, size_t len)
{
	char figures[BUDGET_FIGURES_TEXT];

	snprintf(buf, len, "%s: %s", b->text,
		 budget_figures_text(b, v, figures));
	return buf;
}
