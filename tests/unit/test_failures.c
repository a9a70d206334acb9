/*
 * test_failures.c - the recording shim when writing fails: a disk that
 * fills up (a small tmpfs, /dev/full), a path that cannot be written, a
 * descriptor closed behind the recorder's back. Each time the shim must
 * report the error, stop recording cleanly (later calls refused at once,
 * from every thread, none of them blocked), and leave what it flushed
 * before readable. test_writer.c covers the file-size limit (EFBIG).
 *
 * Children do the recording where a test could hang or needs a mount of
 * its own: an alarm kills a child that blocks, which fails the test.
 */
#include <criterion/criterion.h>

#include <heaptrace/record.h>

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct ht_header header = {
	.version = HT_FORMAT_VERSION,
	.runtime = "failures",
	.pointer_size = 8,
};

#define DUMP_OBJECTS 2000
#define CHILD_SKIP 254 /* no line gives it: see CHILD_CHECK */

/* The child says which check failed and exits with its line (modulo 250,
 * plus 1, so never 0 nor CHILD_SKIP). */
#define CHILD_CHECK(cond)                                             \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "line %d: check failed: %s\n", \
				__LINE__, #cond);                     \
			_exit(__LINE__ % 250 + 1);                    \
		}                                                     \
	} while (0)

/* Runs fn in a child with an alarm: 0 when it passed, CHILD_SKIP when it
 * could not set up; a failed check or a hang fails the test. */
static int in_child(void (*fn)(const char *), const char *arg)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		alarm(60);
		fn(arg);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child killed by signal %d%s",
		  WTERMSIG(status),
		  WTERMSIG(status) == SIGALRM ? " (blocked for 60 s)" : "");
	if (WEXITSTATUS(status) == CHILD_SKIP)
		return CHILD_SKIP;
	cr_assert_eq(WEXITSTATUS(status), 0, "a check of the child failed "
		     "(line %d, modulo 250; its stderr names it)",
		     WEXITSTATUS(status) - 1);
	return 0;
}

/* ---- what a dump holds, and reading it back ------------------------------ */

static ht_id object_id(unsigned dump, unsigned i)
{
	return (ht_id)(dump + 1) << 32 | (ht_id)(i + 1) << 4;
}

static enum ht_error_code record_dump(struct ht_recorder *rec, unsigned dump)
{
	enum ht_error_code rc = ht_begin_container(rec, HT_C_BEGIN, 0, 0);

	if (rc == HT_OK)
		rc = ht_begin_container(rec, HT_C_HEAP, 0, 0);
	for (unsigned i = 0; i < DUMP_OBJECTS && rc == HT_OK; i++) {
		ht_id refs[2] = { object_id(dump, i + 1),
				  object_id(dump, (i * 7919) % DUMP_OBJECTS) };

		rc = ht_object_references(rec, object_id(dump, i), 0x40, 24, 0,
					  2, refs, NULL, -1, HT_RESULT_OK);
	}
	if (rc == HT_OK)
		rc = ht_begin_container(rec, HT_C_END, 0, 0);
	return rc;
}

/* Reads path back: returns the dumps that are whole (C_BEGIN ... C_END,
 * every object as recorded); a dump cut by the failure may follow them,
 * and the file may end inside a chunk, nothing else. */
static unsigned whole_dumps(const char *path)
{
	struct ht_error err;
	struct ht_event ev;
	struct ht_reader *r = ht_reader_open(path, &err);
	unsigned dumps = 0, objects = 0;
	bool open = false;
	int rc;

	CHILD_CHECK(r);
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		if (ev.type == HT_EV_BEGIN_CONTAINER) {
			if (ev.u.begin_container.type == HT_C_BEGIN) {
				CHILD_CHECK(!open);
				open = true;
				objects = 0;
			} else if (ev.u.begin_container.type == HT_C_END) {
				CHILD_CHECK(open && objects == DUMP_OBJECTS);
				open = false;
				dumps++;
			}
			continue;
		}
		if (ev.type != HT_EV_OBJECT_REFERENCES)
			continue; /* the threads' allocations */
		CHILD_CHECK(open);
		CHILD_CHECK(ev.u.object_references.id ==
			    object_id(dumps, objects));
		CHILD_CHECK(ev.u.object_references.class_id == 0x40);
		CHILD_CHECK(ev.u.object_references.count == 2);
		objects++;
	}
	/* the chunk being written when the disk filled is cut short */
	CHILD_CHECK(rc == 0 || err.code == HT_E_TRUNCATED);
	CHILD_CHECK(!ht_reader_index(r)->present);
	ht_reader_close(r);
	return dumps;
}

/* What a stopped recorder must say, and keep saying, cheaply. */
static void check_stopped(struct ht_recorder *rec, const char *path,
			  int errnum)
{
	struct ht_error err;

	CHILD_CHECK(ht_recorder_error(rec, &err) == HT_E_IO);
	CHILD_CHECK(err.sys_errno == errnum);
	CHILD_CHECK(strstr(err.message, path) && strstr(err.message, "byte "));
	CHILD_CHECK(ht_object_allocated(rec, 1, 2, 3) == HT_E_STATE);
	CHILD_CHECK(ht_begin_container(rec, HT_C_BEGIN, 0, 0) == HT_E_STATE);
	CHILD_CHECK(ht_gc_started(rec, 1, 1, HT_GC_OTHER) == HT_E_STATE);
	CHILD_CHECK(ht_recorder_sync(rec) == HT_E_IO);
}

/* ---- a disk that fills up ------------------------------------------------ */

#define ALLOCATORS 3

struct allocator {
	struct ht_recorder *rec;
	atomic_bool *go;
	unsigned tag;
	enum ht_error_code stopped_by;
	unsigned long recorded;
};

/* Records allocations as fast as it can until the recorder refuses; it
 * starts once the first dumps are on disk, or it would fill it first. */
static void *allocate_until_refused(void *arg)
{
	struct allocator *a = arg;
	enum ht_error_code rc = HT_OK;

	while (!atomic_load(a->go))
		sched_yield();
	while (rc == HT_OK) {
		rc = ht_object_allocated(a->rec, (ht_id)(a->tag + 1) << 40 |
					 (ht_id)a->recorded << 4, 0x50, 16);
		if (rc == HT_OK)
			a->recorded++;
	}
	a->stopped_by = rc;
	return NULL;
}

/* A tmpfs of 1 MiB in a mount namespace of the child's own, so that
 * nothing of it outlives the test; recording threads and dumps until the
 * disk is full. */
static void fill_a_small_tmpfs(const char *dir)
{
	const struct ht_record_options small = { .buffer_size = 128 << 10,
						 .buffers = 4 };
	struct allocator a[ALLOCATORS];
	pthread_t th[ALLOCATORS];
	atomic_bool go = false;
	struct ht_recorder *rec;
	struct ht_record_stats st;
	struct ht_error err;
	enum ht_error_code rc = HT_OK;
	char path[512];
	unsigned dump = 0;

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=1m") < 0)
		_exit(CHILD_SKIP);
	snprintf(path, sizeof(path), "%s/full.ht", dir);
	rec = ht_recorder_open(path, &header, &small, &err);
	CHILD_CHECK(rec);
	for (unsigned i = 0; i < ALLOCATORS; i++) {
		a[i] = (struct allocator){ .rec = rec, .go = &go, .tag = i };
		CHILD_CHECK(pthread_create(&th[i], NULL, allocate_until_refused,
					   &a[i]) == 0);
	}
	for (; rc == HT_OK && dump < 10000; dump++) {
		rc = record_dump(rec, dump);
		if (rc == HT_OK)
			rc = ht_recorder_sync(rec);
		if (dump == 1)
			atomic_store(&go, true);
	}
	atomic_store(&go, true);
	CHILD_CHECK(rc == HT_E_IO || rc == HT_E_STATE);
	/* every thread hears of it, none is left waiting for a buffer */
	for (unsigned i = 0; i < ALLOCATORS; i++) {
		CHILD_CHECK(pthread_join(th[i], NULL) == 0);
		CHILD_CHECK(a[i].stopped_by == HT_E_STATE ||
			    a[i].stopped_by == HT_E_IO);
	}
	check_stopped(rec, path, ENOSPC);
	ht_recorder_stats(rec, &st);
	CHILD_CHECK(st.bytes_written <= 1 << 20);
	CHILD_CHECK(ht_recorder_close(rec, &err) == HT_E_IO);
	CHILD_CHECK(err.sys_errno == ENOSPC);
	CHILD_CHECK(strstr(err.message, "No space left on device"));
	/* the dumps flushed before the disk filled read back whole */
	CHILD_CHECK(whole_dumps(path) >= 2);
	_exit(0);
}

Test(failures, disk_full_on_a_small_tmpfs_stops_cleanly)
{
	const char *dir = tmp_path("tmpfs");

	cr_assert_eq(mkdir(dir, 0700), 0);
	if (in_child(fill_a_small_tmpfs, dir) == CHILD_SKIP)
		cr_skip_test("cannot mount a tmpfs here (needs root)");
}

Test(failures, device_that_is_always_full_fails_at_open)
{
	struct ht_error err;

	cr_assert_null(ht_recorder_open("/dev/full", &header, NULL, &err));
	cr_assert_eq(err.code, HT_E_IO);
	cr_assert_eq(err.sys_errno, ENOSPC);
	cr_assert(strstr(err.message, "/dev/full: cannot write the header: "
			 "No space left on device"), "%s", err.message);
}

/* ---- paths that cannot be written ---------------------------------------- */

Test(failures, directory_as_path_fails_at_open)
{
	const char *dir = tmp_path("a-directory");
	struct ht_error err;

	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_null(ht_recorder_open(dir, &header, NULL, &err));
	cr_assert_eq(err.code, HT_E_IO);
	cr_assert_eq(err.sys_errno, EISDIR);
	cr_assert(strstr(err.message, "cannot open for writing"), "%s",
		  err.message);
}

Test(failures, read_only_file_fails_at_open_for_a_user)
{
	const char *path = tmp_path("read-only.ht");
	struct ht_error err;
	struct ht_recorder *rec;
	int fd = open(path, O_CREAT | O_WRONLY, 0444);

	cr_assert_geq(fd, 0);
	close(fd);
	rec = ht_recorder_open(path, &header, NULL, &err);
	if (geteuid() == 0) {
		/* root writes anyway: nothing to refuse */
		cr_assert_not_null(rec, "%s", err.message);
		cr_assert_eq(ht_recorder_close(rec, &err), HT_OK);
		cr_skip_test("root may write a read-only file");
	}
	cr_assert_null(rec);
	cr_assert_eq(err.sys_errno, EACCES);
}

/* ---- a descriptor closed behind the recorder's back ----------------------- */

static void close_after_two_dumps(const char *path)
{
	struct ht_recorder *rec;
	struct ht_error err;
	enum ht_error_code rc = HT_OK;
	int low = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int fd;

	/* a number far above the lowest free one: once closed, nothing the
	 * child opens takes it over */
	CHILD_CHECK(low >= 0);
	fd = fcntl(low, F_DUPFD, 900);
	close(low);
	CHILD_CHECK(fd >= 900);
	rec = ht_recorder_open_fd(fd, path, &header, NULL, &err);
	CHILD_CHECK(rec);
	CHILD_CHECK(record_dump(rec, 0) == HT_OK);
	CHILD_CHECK(record_dump(rec, 1) == HT_OK);
	CHILD_CHECK(ht_recorder_sync(rec) == HT_OK);
	close(fd);
	for (unsigned dump = 2; dump < 100 && rc == HT_OK; dump++) {
		rc = record_dump(rec, dump);
		if (rc == HT_OK)
			rc = ht_recorder_sync(rec);
	}
	CHILD_CHECK(rc == HT_E_IO || rc == HT_E_STATE);
	check_stopped(rec, path, EBADF);
	CHILD_CHECK(ht_recorder_close(rec, &err) == HT_E_IO);
	CHILD_CHECK(err.sys_errno == EBADF);
	/* exactly what went out before the descriptor was closed */
	CHILD_CHECK(whole_dumps(path) == 2);
	_exit(0);
}

Test(failures, closed_descriptor_keeps_what_was_flushed)
{
	in_child(close_after_two_dumps, tmp_path("closed-fd.ht"));
}
