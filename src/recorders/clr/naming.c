/*
 * naming.c - names from metadata, and the recorder thread.
 *
 * Metadata may not be read inside GC callbacks, and a dump's names must
 * be in the trace before the dump ends. The walk adds the class of each
 * object (and the function of each stack root) to a lock-free set; at
 * the end of a dump GC the collecting thread wakes the recorder thread
 * (our own, not the runtime's) and waits, bounded, while it names the new
 * ids; then the GC is closed. The same thread makes room in the tables
 * after each GC, and forces the collections that dumps at other times
 * (exit, signal) take, from a thread with no profiler callback on its
 * stack.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/report.h"
#include "recorders/core/say.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- the recorder thread's requests --------------------------------------- */

/* Async-signal-safe: an atomic or and a write to a pipe. */
void request(unsigned bits)
{
	char c = 1;
	int saved = errno;

	atomic_fetch_or(&state.requests, bits);
	if (state.wake[1] >= 0 && write(state.wake[1], &c, 1) < 0) {
		/* full: a wake-up is pending anyway */
	}
	errno = saved;
}

/* Waits until *done reaches target, at most ms milliseconds: true when it
 * did. */
bool wait_counter(_Atomic uint64_t *done, uint64_t target, unsigned ms)
{
	uint64_t deadline = ms_now() + ms;

	while (atomic_load(done) < target) {
		struct timespec until;
		uint64_t now = ms_now();

		if (now >= deadline)
			return false;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		sem_timedwait(&state.progress, &until);
	}
	return true;
}

/* Moves a counter the waiters look at (wait_counter), and wakes them. */
void announce(_Atomic uint64_t *done, uint64_t value)
{
	atomic_store(done, value);
	sem_post(&state.progress);
}

/* ---- names ----------------------------------------------------------------- */

struct clr_metadata *metadata_of(clr_uptr module)
{
	static const struct clr_guid iid = CLR_IID_METADATA_IMPORT;
	void *md = NULL;

	if (CLR_FAILED(state.info->vtbl->GetModuleMetaData(
		    state.info, module, CLR_OPEN_READ, &iid, &md)) || !md)
		return NULL;
	return md;
}

void release_metadata(struct clr_metadata *md)
{
	if (md)
		md->vtbl->Release(md);
}

/* The type definition's name, and those it is nested in, innermost
 * first. */
static int nesting_of(struct clr_metadata *md, clr_token td,
		      struct clrn_type *t)
{
	t->n_nest = 0;
	while (t->n_nest < CLRN_MAX_NEST) {
		clr_wchar wname[CLRN_SEGMENT_MAX];
		clr_ulong n = 0, flags = 0;
		clr_token extends = 0, outer = 0;

		if (CLR_FAILED(md->vtbl->GetTypeDefProps(md, td, wname,
							 CLRN_SEGMENT_MAX, &n,
							 &flags, &extends)))
			break;
		clrn_from_utf16(t->nest[t->n_nest], CLRN_SEGMENT_MAX, wname,
				n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
		t->n_nest++;
		if (md->vtbl->GetNestedClassProps(md, td, &outer) != CLR_S_OK ||
		    (outer & 0x00FFFFFFu) == 0)
			break;
		td = outer;
	}
	return t->n_nest ? 0 : -1;
}

static int source_array(void *ctx, uint64_t cls, unsigned *rank,
			uint64_t *elem, uint32_t *elem_type)
{
	clr_uptr base = 0;
	clr_ulong r = 0;
	uint32_t et = 0;
	clr_hresult hr;

	(void)ctx;
	hr = state.info->vtbl->IsArrayClass(state.info, (clr_uptr)cls, &et,
					    &base, &r);
	if (hr == CLR_S_FALSE)
		return 0;
	if (hr != CLR_S_OK)
		return -1;
	*rank = (unsigned)r;
	*elem = base;
	*elem_type = et;
	return 1;
}

static int source_type(void *ctx, uint64_t cls, struct clrn_type *t)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	int rc;

	(void)ctx;
	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, (clr_uptr)cls, &module, &td, &parent,
		    CLRN_MAX_ARGS, &n_args, args)))
		return -1;
	md = metadata_of(module);
	if (!md)
		return -1;
	rc = nesting_of(md, td, t);
	release_metadata(md);
	t->n_args = n_args < CLRN_MAX_ARGS ? n_args : CLRN_MAX_ARGS;
	for (size_t i = 0; i < t->n_args; i++)
		t->args[i] = args[i];
	return rc;
}

static const struct clrn_source runtime_source = {
	.array = source_array,
	.type = source_type,
};

static void name_class(uint64_t id, void *ctx)
{
	char name[4096];
	struct clrn_buf b;

	(void)ctx;
	if (idset_contains(&state.classes_named, id))
		return;
	clrn_init(&b, name, sizeof(name));
	clrn_class_name(&runtime_source, id, &b);
	ht_class(state.trace.rec, id, name, false, 0);
	idset_add(&state.classes_named, id, false);
}

/* Class.Method; the class from the function's own class id (exact for a
 * generic instance), else from its type definition. */
void method_name(uint64_t fid, struct clrn_buf *b)
{
	clr_uptr cls = 0, module = 0;
	clr_token token = 0, td = 0;
	clr_wchar wname[CLRN_SEGMENT_MAX];
	char name[CLRN_SEGMENT_MAX * 3];
	clr_ulong n = 0, attr = 0, sig_size = 0, rva = 0, impl = 0;
	const uint8_t *sig = NULL;
	struct clr_metadata *md;
	struct clrn_type t;

	if (CLR_FAILED(state.info->vtbl->GetFunctionInfo(state.info,
							 (clr_uptr)fid, &cls,
							 &module, &token)) ||
	    !(md = metadata_of(module))) {
		snprintf(name, sizeof(name), "function 0x%llx",
			 (unsigned long long)fid);
		clrn_put(b, name);
		return;
	}
	if (CLR_FAILED(md->vtbl->GetMethodProps(md, token, &td, wname,
						CLRN_SEGMENT_MAX, &n, &attr,
						&sig, &sig_size, &rva,
						&impl))) {
		release_metadata(md);
		snprintf(name, sizeof(name), "function 0x%llx",
			 (unsigned long long)fid);
		clrn_put(b, name);
		return;
	}
	clrn_from_utf16(name, sizeof(name), wname,
			n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
	if (cls) {
		clrn_class_name(&runtime_source, cls, b);
	} else if (nesting_of(md, td, &t) == 0) {
		for (size_t i = t.n_nest; i-- > 0;) {
			clrn_put(b, t.nest[i]);
			if (i)
				clrn_put(b, "+");
		}
	}
	release_metadata(md);
	clrn_put(b, ".");
	clrn_put(b, name);
}

static void name_method(uint64_t id, void *ctx)
{
	char name[4096];
	struct clrn_buf b;

	(void)ctx;
	if (idset_contains(&state.methods_named, id))
		return;
	clrn_init(&b, name, sizeof(name));
	method_name(id, &b);
	ht_method(state.trace.rec, id, name);
	idset_add(&state.methods_named, id, false);
}

static void name_new_ids(void)
{
	idset_for_each(&state.classes_seen, name_class, NULL);
	idset_for_each(&state.methods_seen, name_method, NULL);
}

/*
 * Names are written soon after an id is first met, by the recorder
 * thread, not only at the end of the dump that meets it: a dump cut off
 * before its end (kill -9, a crash) then finds in the trace the names of
 * the classes loaded before it and of most that it met. A class is met
 * when it finishes loading (ClassLoadFinished, outside GCs), or in a walk
 * or an allocation for those whose load the runtime does not report
 * (arrays, classes loaded before the profiler). The thread that meets an
 * id only notes it and wakes the recorder thread when no wake-up is
 * pending (a write to a pipe: no lock, no malloc); the metadata is read
 * there, by the one thread that names, beside the walk that goes on.
 */
static void name_soon_wake(void)
{
	if (!(atomic_fetch_or(&state.requests, REQ_NAME_SOON) & REQ_NAME_SOON))
		request(REQ_NAME_SOON);
}

void name_soon(clr_uptr cls)
{
	if (!cls || idset_contains(&state.classes_named, cls))
		return;
	if (idset_add(&state.classes_seen, cls, false) == 1)
		name_soon_wake();
}

/* Inside pauses as well: no lock, no malloc. */
void saw_class(clr_uptr cls)
{
	if (cls && !idset_contains(&state.classes_seen, cls) &&
	    idset_add(&state.classes_seen, cls, true) == 1)
		name_soon_wake();
}

void saw_method(clr_uptr fid)
{
	if (fid && !idset_contains(&state.methods_seen, fid) &&
	    idset_add(&state.methods_seen, fid, true) == 1)
		name_soon_wake();
}

/* ---- forced GCs ------------------------------------------------------------ */

/* A thread of ours with no profiler callback on its stack, as ForceGC
 * requires; one at a time. */
static void *forcer_main(void *arg)
{
	clr_hresult hr;

	(void)arg;
	stacks_snapshot();
	hr = state.info->vtbl->ForceGC(state.info);
	if (CLR_FAILED(hr)) {
		say("ForceGC failed (0x%08x): no dump now",
		    (unsigned)hr);
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
	set_flag(&state.forcing, false);
	return NULL;
}

static void force_dump(void)
{
	sigset_t all, old;
	int rc;

	if (flag(&state.forcing))
		return; /* the collection on its way will do */
	refresh_frozen();
	/* the last forcer has returned: reap it */
	if (state.forcer_joinable)
		pthread_join(state.forcer, NULL);
	state.forcer_joinable = false;
	set_flag(&state.forced_pending, true);
	set_flag(&state.forcing, true);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.forcer, NULL, forcer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	state.forcer_joinable = rc == 0;
	if (rc != 0) {
		set_flag(&state.forcing, false);
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
}

/* ---- the recorder thread --------------------------------------------------- */

static void after_gc(void)
{
	report_if_failed(state.trace.rec);
	bounds_make_room();
	dependents_make_room();
	/* a walk adds without growing: room for this many new ids */
	idset_make_room(&state.classes_seen, 16384);
	idset_make_room(&state.methods_seen, 4096);
	refresh_frozen();
	statics_locate(0);
}

static void *recorder_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = {.fd = state.wake[0], .events = POLLIN};
		char drain[64];
		unsigned bits;

		poll(&p, 1, 200);
		while (read(state.wake[0], drain, sizeof(drain)) > 0)
			;
		bits = atomic_exchange(&state.requests, 0);
		if (bits & REQ_NAME) {
			uint64_t asked = atomic_load(&state.name_asked);

			refresh_frozen();
			name_new_ids();
			/* for the next dumps: classes whose load went unseen */
			idset_for_each(&state.classes_seen, prepare_fields_of,
				       NULL);
			idset_for_each(&state.classes_seen,
				       find_string_class_of, NULL);
			name_new_ids();
			statics_locate(asked);
			announce(&state.name_done, asked);
		}
		if (bits & REQ_QUIT)
			break;
		if (bits & REQ_AFTER_GC)
			after_gc();
		if (bits & REQ_DUMP)
			force_dump();
		if (bits & REQ_SITES)
			sites_resolve();
		if (bits & REQ_NAME_SOON) {
			name_new_ids();
			/* beside a dump: into the file before its end */
			if (flag(&state.dump_gc))
				ht_recorder_hand_off(state.trace.rec);
		}
	}
	/* a forcer still inside ForceGC (the runtime would not collect) is
	 * left to the process's end */
	if (state.forcer_joinable) {
		if (flag(&state.forcing))
			pthread_detach(state.forcer);
		else
			pthread_join(state.forcer, NULL);
	}
	state.forcer_joinable = false;
	return NULL;
}

int start_recorder_thread(void)
{
	sigset_t all, old;
	int rc;

	if (pipe(state.wake) != 0)
		return -1;
	fcntl(state.wake[0], F_SETFL, O_NONBLOCK);
	fcntl(state.wake[1], F_SETFL, O_NONBLOCK);
	fcntl(state.wake[0], F_SETFD, FD_CLOEXEC);
	fcntl(state.wake[1], F_SETFD, FD_CLOEXEC);
	if (sem_init(&state.progress, 0, 0) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.thread, NULL, recorder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	state.thread_started = true;
	return 0;
}

void stop_recorder_thread(void)
{
	if (!state.thread_started)
		return;
	request(REQ_QUIT);
	pthread_join(state.thread, NULL);
	state.thread_started = false;
}

/* Asks for a dump and waits for it: ms at most. */
bool dump_now(unsigned ms)
{
	uint64_t ticket = atomic_fetch_add(&state.dumps_asked, 1) + 1;

	request(REQ_DUMP);
	return wait_counter(&state.dumps_done, ticket, ms);
}
