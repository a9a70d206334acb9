/*
 * grouped.h - whole numbers written for people to read, their digits in
 * groups of three: 1,234,567 (flame's tooltips, the figures of a broken
 * budget).
 */
#ifndef HT_GROUPED_H
#define HT_GROUPED_H

#include <inttypes.h>
#include <stdio.h>

/* v into buf, which holds the 26 characters of the largest; returns buf. */
static inline const char *grouped(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v), j = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
	return buf;
}

#endif
