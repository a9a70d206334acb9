/*
 * test_restore.c - the environment `heaptrace record` changed, put back by
 * the recorder (src/recorders/restore.c): record's value goes, and what a
 * wrapper script added around it, or set instead of it, stays.
 */
#include <criterion/criterion.h>

#include "recorders/core/restore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value restored_value gives, "(unset)" for none. */
static void restores(const char *current, const char *set, const char *old,
		     const char *want)
{
	bool failed = true;
	char *v = restored_value(current, set, old, &failed);

	cr_assert(!failed);
	cr_assert_str_eq(v ? v : "(unset)", want, "current '%s', set '%s', "
			 "old '%s'", current ? current : "(unset)",
			 set ? set : "(unset)", old ? old : "(unset)");
	free(v);
}

Test(restore, untouched_by_a_wrapper_gets_its_old_value)
{
	restores("/rec:/a", "/rec:/a", "/a", "/a");
	restores("--profile=heaptrace:dump=major", "--profile=heaptrace:dump=major",
		 NULL, "(unset)");
}

Test(restore, a_wrappers_additions_stay)
{
	/* MONO_ENV_OPTIONS="$MONO_ENV_OPTIONS --debug" */
	restores("--profile=heaptrace --debug", "--profile=heaptrace", NULL,
		 " --debug");
	/* LD_LIBRARY_PATH=/w:$LD_LIBRARY_PATH, record had prepended /rec */
	restores("/w:/rec:/a", "/rec:/a", "/a", "/w:/a");
	/* JDK_JAVA_OPTIONS="$JDK_JAVA_OPTIONS -Dy=2", record had added the
	 * agent to -Dx=1 */
	restores("-Dx=1 \"-agentpath:a=b\" -Dy=2", "-Dx=1 \"-agentpath:a=b\"",
		 "-Dx=1", "-Dx=1 -Dy=2");
}

Test(restore, a_wrappers_own_value_stays)
{
	restores("--debug", "--profile=heaptrace", "--old", "--debug");
	/* removed by the wrapper */
	restores(NULL, "--profile=heaptrace", "--old", "(unset)");
}

Test(restore, a_variable_record_unset)
{
	/* CORECLR_PROFILER_PATH_64, removed so that it does not win */
	restores(NULL, NULL, "/other.so", "/other.so");
	restores("/wrappers.so", NULL, "/other.so", "/wrappers.so");
}

/* The whole list, through a PUT that records what it is asked. */
static char puts_seen[1024];

static void remember(const char *name, const char *value)
{
	size_t n = strlen(puts_seen);

	snprintf(puts_seen + n, sizeof(puts_seen) - n, "%s=%s;", name,
		 value ? value : "(unset)");
	put_process_env(name, value);
}

Test(restore, the_list)
{
	setenv("HEAPTRACE_RESTORE", "A B", 1);
	setenv("A", "rec more", 1);
	setenv("HEAPTRACE_SET_A", "rec", 1);
	setenv("HEAPTRACE_SAVED_A", "old", 1);
	setenv("B", "rec", 1);
	setenv("HEAPTRACE_SET_B", "rec", 1);
	unsetenv("HEAPTRACE_SAVED_B");
	cr_assert(restore_environment(remember));
	cr_assert_str_eq(getenv("A"), "old more");
	cr_assert_null(getenv("B"));
	cr_assert_null(getenv("HEAPTRACE_RESTORE"));
	cr_assert_null(getenv("HEAPTRACE_SET_A"));
	cr_assert_null(getenv("HEAPTRACE_SAVED_A"));
	cr_assert(!restore_environment(remember), "no list: nothing to do");
}
