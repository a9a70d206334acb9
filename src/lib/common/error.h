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

#include <stdbool.h>

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

/* Whether a reader's error is damage of its input, whose events before it
 * are an answer to give; running out of memory is not: nothing before it
 * is (heaptrace(1), DIAGNOSTICS). */
static inline bool err_is_damage(const struct ht_error *err)
{
	return err->code != HT_E_NOMEM;
}

#endif
