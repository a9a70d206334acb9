/*
 * humanize.c - the size and duration formatters of humanize.h.
 */
#include "util/humanize.h"

#include "util/alloc.h"

#include <stdio.h>

static const char *const units[] = {
	"KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
};

const char *format_size(uint64_t bytes, enum size_style style, char *buf)
{
	/* the first unit is used from `first` bytes; a larger one once the
	 * figure reaches `next` of the smaller */
	double first = style == SIZE_FROM_TEN ? 10.0 * 1024 : 1024;
	/* 1023.95 KiB would print as "1024.0 KiB": that is 1.0 MiB */
	double next = style == SIZE_FROM_TEN ? 10.0 * 1024 : 1023.95;
	size_t last = style == SIZE_FROM_TEN ? 1 : ARRAY_SIZE(units) - 1;
	double v;
	size_t u = 0;

	if ((double)bytes < first) {
		snprintf(buf, SIZE_TEXT, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	/* dividing by 1024 is exact, however often it is done */
	v = (double)bytes / 1024.0;
	while (v >= next && u < last) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, SIZE_TEXT, "%.1f %s", v, units[u]);
	return buf;
}

const char *signed_size(int64_t delta, char *buf)
{
	uint64_t magnitude = delta < 0 ? (uint64_t)0 - (uint64_t)delta
				       : (uint64_t)delta;
	char h[SIZE_TEXT];

	snprintf(buf, SIZE_TEXT + 1, "%s%s",
		 delta > 0 ? "+" : delta < 0 ? "-" : "", human_size(magnitude, h));
	return buf;
}

const char *human_duration(uint64_t ns, char *buf)
{
	/* integer arithmetic: the same text on every machine */
	if (ns < 1000u)
		snprintf(buf, DURATION_TEXT, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000u)
		snprintf(buf, DURATION_TEXT, "%llu.%llu us",
			 (unsigned long long)(ns / 1000u),
			 (unsigned long long)(ns / 100u % 10u));
	else if (ns < 1000000000u)
		snprintf(buf, DURATION_TEXT, "%llu.%02llu ms",
			 (unsigned long long)(ns / 1000000u),
			 (unsigned long long)(ns / 10000u % 100u));
	else
		snprintf(buf, DURATION_TEXT, "%llu.%03llu s",
			 (unsigned long long)(ns / 1000000000u),
			 (unsigned long long)(ns / 1000000u % 1000u));
	return buf;
}
