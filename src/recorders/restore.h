/*
 * restore.h - putting back the environment `heaptrace record` changed for
 * a recorder (cli/record.h, env_override): HEAPTRACE_RESTORE lists the
 * variables, HEAPTRACE_SAVED_<NAME> holds each one's old value (absent
 * when it was unset). Once the recorder is loaded they are put back, so
 * that processes the program starts are not recorded into the same trace.
 * Shared by the three recorders.
 */
#ifndef HT_RECORDERS_RESTORE_H
#define HT_RECORDERS_RESTORE_H

#include <stdbool.h>

/* Sets NAME to VALUE, or unsets it when VALUE is NULL. */
typedef void (*env_put_fn)(const char *name, const char *value);

/* Puts every listed variable back through PUT, then removes the saved
 * values and the list. false when there is no list (a recorder loaded by
 * hand, not by `record`). */
bool restore_environment(env_put_fn put);

/* An env_put_fn on the process's environment (setenv, unsetenv). */
void put_process_env(const char *name, const char *value);

#endif
