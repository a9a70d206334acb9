/*
 * restore.c - the environment `heaptrace record` changed, put back
 * (restore.h).
 */
#include "recorders/restore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void put_process_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

bool restore_environment(env_put_fn put)
{
	const char *list = getenv("HEAPTRACE_RESTORE");
	char *copy, *save = NULL;

	if (!list)
		return false;
	copy = strdup(list);
	if (!copy)
		return true;
	for (char *name = strtok_r(copy, " ", &save); name;
	     name = strtok_r(NULL, " ", &save)) {
		char saved_name[256];
		const char *old;
		char *old_copy;

		snprintf(saved_name, sizeof(saved_name), "HEAPTRACE_SAVED_%s",
			 name);
		/* a copy: putting NAME back may move the environment */
		old = getenv(saved_name);
		old_copy = old ? strdup(old) : NULL;
		put(name, old_copy);
		put(saved_name, NULL);
		free(old_copy);
	}
	free(copy);
	put("HEAPTRACE_RESTORE", NULL);
	return true;
}
