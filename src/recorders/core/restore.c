/*
 * restore.c - the environment `heaptrace record` changed, put back
 * (restore.h).
 */
#include "recorders/core/restore.h"

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

static char *copy_or_null(const char *s, bool *failed)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*failed = true;
	return c;
}

char *restored_value(const char *current, const char *set, const char *old,
		     bool *failed)
{
	const char *at;
	size_t before, len;
	char *v;

	*failed = false;
	if (!set) /* record unset it: a value now is a wrapper's */
		return copy_or_null(current ? current : old, failed);
	if (!current) /* a wrapper removed it */
		return NULL;
	if (strcmp(current, set) == 0)
		return copy_or_null(old, failed);
	at = *set ? strstr(current, set) : NULL;
	if (!at) /* a wrapper's own value */
		return copy_or_null(current, failed);
	before = (size_t)(at - current);
	len = strlen(current) - strlen(set) + (old ? strlen(old) : 0) + 1;
	v = malloc(len);
	if (!v) {
		*failed = true;
		return NULL;
	}
	snprintf(v, len, "%.*s%s%s", (int)before, current, old ? old : "",
		 at + strlen(set));
	return v;
}

/* Puts NAME back; its saved and set values go too. */
static void restore_one(const char *name, env_put_fn put)
{
	char saved_name[256], set_name[256];
	const char *set;
	char *value;
	bool failed;

	snprintf(saved_name, sizeof(saved_name), "HEAPTRACE_SAVED_%s", name);
	snprintf(set_name, sizeof(set_name), "HEAPTRACE_SET_%s", name);
	set = getenv(set_name);
	/* a copy: putting NAME back may move the environment */
	value = restored_value(getenv(name), set, getenv(saved_name),
			       &failed);
	if (!failed)
		put(name, value);
	put(saved_name, NULL);
	put(set_name, NULL);
	free(value);
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
	     name = strtok_r(NULL, " ", &save))
		restore_one(name, put);
	free(copy);
	put("HEAPTRACE_RESTORE", NULL);
	return true;
}
