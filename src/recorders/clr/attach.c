/*
 * attach.c - the CoreCLR profiler attached to a process that runs
 * already (heaptrace record --pid): InitializeForAttach, the control
 * socket to heaptrace (recorders/core/control.h), and the detach.
 *
 * heaptrace sends the runtime's diagnostics IPC command AttachProfiler
 * with this library's path and, as client data, the option string the
 * profiler otherwise reads from HEAPTRACE_CLR_OPTIONS (control=SOCKET
 * among them). The runtime loads the library and calls
 * InitializeForAttach on a thread of its own; the profiler connects to
 * heaptrace first, so that heaptrace hears of every problem (the
 * service's standard error is not the user's), then records as it does
 * from a start with three differences: only the events a profiler may ask
 * for after the start (no allocations: `record` refuses --allocations
 * with --pid); no signal of the service's is caught (heaptrace asks for
 * dumps on the socket; SIGTERM and SIGINT are the service's); nothing is
 * left behind for the unload (no atexit handler, no thread of ours).
 *
 * A thread of ours serves heaptrace's requests: "dump" is a collection
 * forced as the dumps at exit are (naming.c); the end of the stream takes
 * the last dump ("at detach"), closes the trace and asks the runtime to
 * detach the profiler (RequestProfilerDetach). The runtime then waits for
 * every callback to return, calls ProfilerDetachSucceeded, where the
 * profiler tells heaptrace and hangs up, and unloads the library: the
 * service runs on unprofiled. When the service exits first, Shutdown takes
 * the exit dump and closes the trace (clr-profiler.c), and the socket is
 * hung up.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/control.h"
#include "recorders/core/say.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The runtime's wait before it checks that no callback is running: the
 * control thread only returns after asking. */
#define DETACH_EXPECTED_MS 500

/* Each message goes to heaptrace too: the service's standard error is
 * not the user's. */
void attach_tell(const char *message)
{
	int fd = atomic_load(&state.control);

	if (fd >= 0)
		control_channel_say(fd, message);
}

/* Ends the socket: heaptrace takes the end of the stream for the end of
 * the recording. Shut down, not closed: the control thread may be
 * reading it. */
void attach_hang_up(void)
{
	int fd = atomic_load(&state.control);

	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

static void dump_requested(void *arg)
{
	(void)arg;
	if (!flag(&state.trace.guard.closed) && !dump_now(EXIT_DUMP_WAIT_MS))
		say("no dump: the runtime did not collect within %d seconds",
		    EXIT_DUMP_WAIT_MS / 1000);
}

/* The classes loaded before the attach: their loads went unseen, so
 * they have no field table yet (fields.c), and a dump that met them first
 * would record their objects' references without field names (the table
 * of a class is made when the dump that meets it ends). One collection
 * forced now, whose heap walk only gathers the classes of the objects it
 * meets (callbacks.c), names them and makes their tables before heaptrace
 * can ask for a dump. A collection before the attach completes may come
 * without its walk (the runtime calls an attaching profiler back only once
 * it is complete, which a loaded machine makes slow): the walk is counted,
 * and a collection that met no object is forced again. Nothing waits on
 * this but heaptrace's first dump, so the waits are long. */
static void meet_the_classes(void)
{
	struct timespec until;
	uint64_t ticket;
	clr_hresult hr = CLR_S_OK;
	int tries;

	atomic_store(&state.primed_objects, 0); /* the library stays loaded
						 * from one attach to the next */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PRIMING_WAIT_MS / 1000;
	while (sem_timedwait(&state.attach_complete, &until) != 0 &&
	       errno == EINTR)
		;
	for (tries = 0; tries < PRIMING_TRIES &&
			atomic_load(&state.primed_objects) == 0; tries++) {
		if (tries)
			sleep(1);
		set_flag(&state.priming, true);
		hr = state.info->vtbl->ForceGC(state.info);
		set_flag(&state.priming, false);
		if (CLR_FAILED(hr))
			break;
	}
	if (CLR_FAILED(hr) || atomic_load(&state.primed_objects) == 0) {
		say("ForceGC failed (0x%08x) or its walk met no object: the "
		    "classes loaded before the attach get their field names "
		    "from the second dump on", (unsigned)hr);
		return;
	}
	ticket = atomic_fetch_add(&state.name_asked, 1) + 1;
	request(REQ_NAME);
	if (!wait_counter(&state.name_done, ticket, PRIMING_WAIT_MS))
		say("the classes loaded before the attach were not named "
		    "within %d seconds", PRIMING_WAIT_MS / 1000);
	/* The recorder thread gives up a class whose table a class load
	 * beside it holds the lock of (it may not wait inside a GC, where
	 * that loading thread may be stopped): no GC holds this thread, so
	 * it waits for them. */
	idset_for_each(&state.classes_seen, prepare_fields_waiting, NULL);
}

clr_hresult on_attach_complete(CLR_THIS)
{
	(void)self;
	sem_post(&state.attach_complete);
	return CLR_S_OK;
}

/* The last dump, the trace closed, then the detach asked for: this
 * thread's last use of the library. */
static void *control_main(void *arg)
{
	clr_hresult hr;

	(void)arg;
	meet_the_classes();
	control_channel_serve(atomic_load(&state.control), dump_requested,
			      NULL);
	if (flag(&state.exiting) || flag(&state.trace.guard.closed)) {
		/* the service exits: Shutdown has closed the trace */
		attach_hang_up();
		return NULL;
	}
	if (!dump_now(EXIT_DUMP_WAIT_MS))
		say("%s: no last dump: the runtime did not collect within "
		    "%d seconds", state.trace.output, EXIT_DUMP_WAIT_MS / 1000);
	set_flag(&state.exiting, true);
	close_recorder();
	hr = state.info->vtbl->RequestProfilerDetach(state.info,
						     DETACH_EXPECTED_MS);
	if (CLR_FAILED(hr)) {
		say("the runtime refused to detach the profiler (0x%08x): it "
		    "stays loaded, recording nothing", (unsigned)hr);
		attach_hang_up();
	}
	return NULL;
}

/* The runtime releases the library once this returns: the descriptors
 * go back to the process (the control thread has left by now, and no
 * callback records any more, so none of them is in use). */
clr_hresult on_detached(CLR_THIS)
{
	int fd;

	(void)self;
	say("detached from process %d: it runs on unprofiled",
	    (int)getpid());
	fd = atomic_exchange(&state.control, -1);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 2; i++) {
		if (state.wake[i] >= 0)
			close(state.wake[i]);
		state.wake[i] = -1;
	}
	return CLR_S_OK;
}

int attach_connect(void)
{
	int fd = control_channel_connect(state.opt.control);

	if (fd < 0) {
		say("cannot reach heaptrace at %s: %s", state.opt.control,
		    strerror(errno));
		return -1;
	}
	atomic_store(&state.control, fd);
	return 0;
}

/* The thread that serves heaptrace, detached: it is gone once the detach
 * is asked for. No signal of the service's is taken by it. */
int attach_serve(void)
{
	sigset_t all, old;
	pthread_t t;
	int rc;

	if (sem_init(&state.attach_complete, 0, 0) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t, NULL, control_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	pthread_detach(t);
	return 0;
}

/* The options come as client data: the same string as
 * HEAPTRACE_CLR_OPTIONS, not NUL-terminated. */
clr_hresult on_initialize_for_attach(CLR_THIS, void *info_unknown,
				     void *data, unsigned size)
{
	char *options;
	clr_hresult hr;

	(void)self;
	say_as("clr", NULL);
	if (size > 65536 || (size && !data)) {
		say("attached with options of %u bytes: not heaptrace's; not "
		    "recording", size);
		return CLR_E_FAIL;
	}
	options = malloc((size_t)size + 1);
	if (!options) {
		say("out of memory; not recording");
		return CLR_E_FAIL;
	}
	if (size)
		memcpy(options, data, size);
	options[size] = '\0';
	/* attached again, the library still loaded after the last detach:
	 * that recording's threads are gone, its state starts anew (what it
	 * allocated stays allocated) */
	if (state.attached) {
		struct clr_callback callback = state.callback;
		struct clr_factory factory = state.factory;

		memset(&state, 0, sizeof(state));
		state.callback = callback;
		state.factory = factory;
		statics_forget();
	}
	state.attached = true;
	hr = start_recording(info_unknown, options);
	free(options);
	return hr;
}
