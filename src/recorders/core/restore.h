/*
 * restore.h - putting back the environment `heaptrace record` changed for
 * a recorder (cli/record.h, env_override): HEAPTRACE_RESTORE lists the
 * variables, HEAPTRACE_SAVED_<NAME> holds each one's old value (absent
 * when it was unset), HEAPTRACE_SET_<NAME> the value record gave it.
 * Once the recorder is loaded they are put back, so that processes the
 * program starts are not recorded into the same trace. A wrapper script
 * between record and the runtime may have changed them in its turn: what
 * it added around record's value stays, record's part alone goes. Shared
 * by the three recorders.
 */
#ifndef HT_RECORDERS_RESTORE_H
#define HT_RECORDERS_RESTORE_H

#include <stdbool.h>

/* Sets NAME to VALUE, or unsets it when VALUE is NULL. */
typedef void (*env_put_fn)(const char *name, const char *value);

/* Puts every listed variable back through PUT, then removes the saved
 * values and the list. A variable that still holds record's value gets
 * its old one back; one that holds record's value with more around it (a
 * wrapper's "$VAR more") keeps the more, record's value in it replaced by
 * the old one; one a wrapper set outright, or removed, is left as it is.
 * false when there is no list (a recorder loaded by hand, not by
 * `record`). */
bool restore_environment(env_put_fn put);

/* The value after restore_environment: OLD (NULL: unset) when CURRENT is
 * SET; CURRENT with SET in it replaced by OLD when it holds SET; CURRENT
 * otherwise. SET NULL: record unset the variable. malloc'ed, or NULL for
 * unset; *failed set when out of memory. */
char *restored_value(const char *current, const char *set, const char *old,
		     bool *failed);

/* An env_put_fn on the process's environment (setenv, unsetenv). */
void put_process_env(const char *name, const char *value);

#endif
