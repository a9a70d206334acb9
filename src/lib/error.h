/*
 * error.h - filling struct ht_error with a message that names the file, the
 * place and the cause, in one style for every reader and writer:
 *   "FILE: byte OFFSET: CAUSE"        binary input
 *   "FILE:LINE:COLUMN: CAUSE"         text input
 *   "FILE: CAUSE"                     no position
 */
#ifndef HT_ERROR_H
#define HT_ERROR_H

#include <heaptrace/trace.h>

#define HT_PRINTF(f, a) __attribute__((format(printf, f, a)))

void err_plain(struct ht_error *err, enum ht_error_code code,
	       const char *file, const char *fmt, ...) HT_PRINTF(4, 5);
void err_at_offset(struct ht_error *err, enum ht_error_code code,
		   const char *file, uint64_t offset, const char *fmt, ...)
	HT_PRINTF(5, 6);
void err_at_line(struct ht_error *err, enum ht_error_code code,
		 const char *file, unsigned line, unsigned column,
		 const char *fmt, ...) HT_PRINTF(6, 7);
/* As err_plain, with ": strerror(errnum)" appended and sys_errno set. */
void err_sys(struct ht_error *err, int errnum, const char *file,
	     const char *fmt, ...) HT_PRINTF(4, 5);
void err_clear(struct ht_error *err);

#endif
