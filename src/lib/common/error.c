/*
 * error.c - building ht_error messages (see error.h for the style).
 */
#include "lib/common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

void err_clear(struct ht_error *err)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
}

static void __attribute__((format(printf, 4, 0)))
fill(struct ht_error *err, enum ht_error_code code,
		 const char *prefix, const char *fmt, va_list ap)
{
	size_t n;

	err->code = code;
	n = (size_t)snprintf(err->message, sizeof(err->message), "%s", prefix);
	if (n < sizeof(err->message))
		vsnprintf(err->message + n, sizeof(err->message) - n, fmt, ap);
}

void err_plain(struct ht_error *err, enum ht_error_code code,
	       const char *file, const char *fmt, ...)
{
	char prefix[300];
	va_list ap;

	if (!err)
		return;
	err_clear(err);
	snprintf(prefix, sizeof(prefix), "%s%s", file ? file : "",
		 file ? ": " : "");
	va_start(ap, fmt);
	fill(err, code, prefix, fmt, ap);
	va_end(ap);
}

void err_at_offset(struct ht_error *err, enum ht_error_code code,
		   const char *file, uint64_t offset, const char *fmt, ...)
{
	char prefix[300];
	va_list ap;

	if (!err)
		return;
	err_clear(err);
	err->offset = offset;
	snprintf(prefix, sizeof(prefix), "%s: byte %llu: ", file ? file : "-",
		 (unsigned long long)offset);
	va_start(ap, fmt);
	fill(err, code, prefix, fmt, ap);
	va_end(ap);
}

void err_at_line(struct ht_error *err, enum ht_error_code code,
		 const char *file, unsigned line, unsigned column,
		 const char *fmt, ...)
{
	char prefix[300];
	va_list ap;

	if (!err)
		return;
	err_clear(err);
	err->line = line;
	err->column = column;
	snprintf(prefix, sizeof(prefix), "%s:%u:%u: ", file ? file : "-", line,
		 column);
	va_start(ap, fmt);
	fill(err, code, prefix, fmt, ap);
	va_end(ap);
}

void err_sys(struct ht_error *err, int errnum, const char *file,
	     const char *fmt, ...)
{
	char prefix[300];
	size_t n;
	va_list ap;

	if (!err)
		return;
	err_clear(err);
	err->sys_errno = errnum;
	snprintf(prefix, sizeof(prefix), "%s%s", file ? file : "",
		 file ? ": " : "");
	va_start(ap, fmt);
	fill(err, errnum == ENOMEM ? HT_E_NOMEM : HT_E_IO, prefix, fmt, ap);
	va_end(ap);
	n = strlen(err->message);
	if (n < sizeof(err->message))
		snprintf(err->message + n, sizeof(err->message) - n, ": %s",
			 strerror(errnum));
}
