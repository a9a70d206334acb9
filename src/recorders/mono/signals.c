/*
 * signals.c - the signals of the Mono profiler: SIGUSR1 asks for a dump
 * (--dump-on signal); SIGTERM and SIGINT take the exit dump and close the
 * trace before the program ends as it would have. A helper thread does
 * the work the handlers may not.
 */
#include "recorders/mono/mono.h"
#include "recorders/core/say.h"
#include "util/alloc.h"

#include <mono/metadata/appdomain.h>
#include <mono/metadata/mono-gc.h>
#include <mono/metadata/threads.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* ---- signals: --dump-on signal, SIGTERM, SIGINT --------------------------- */

/*
 * SIGTERM and SIGINT end a Mono program at once, without the runtime's
 * shutdown and so without its exit dump. Left at their default action
 * when the module loads, they are caught here: the helper thread takes
 * the exit dump, closes the trace, and then lets the signal end the
 * program as it would have (status 128 + N). A program that handles them
 * itself (Mono.Unix.UnixSignal) replaces this, and ends as it chooses.
 */
static const int ending_signals[] = {SIGTERM, SIGINT};
#define N_ENDING ARRAY_SIZE(ending_signals)

static void on_dump_signal(int sig)
{
	int saved = errno;

	if (sig != DUMP_SIGNAL)
		atomic_store(&state.ending_signal, sig);
	sem_post(&state.signal_sem); /* async-signal-safe */
	errno = saved;
}


/* The end the signal would have made, after the exit dump. Runs on the
 * helper thread, which every signal is blocked on: another thread takes
 * the signal, now with its default action. */
static void end_by_signal(int sig)
{
	if (flag(&state.runtime_ready) && !flag(&state.trace.guard.closed)) {
		/* the exit dump wants a thread the runtime knows */
		mono_thread_attach(mono_get_root_domain());
		on_shutdown_begin(NULL);
	}
	close_recorder();
	signal(sig, SIG_DFL);
	kill(getpid(), sig);
	for (;;)
		pause();
}

static void *signal_main(void *arg)
{
	(void)arg;
	for (;;) {
		int ending;

		while (sem_wait(&state.signal_sem) != 0 && errno == EINTR)
			;
		if (flag(&state.signal_quit))
			return NULL;
		ending = atomic_load(&state.ending_signal);
		if (ending)
			end_by_signal(ending);
		set_flag(&state.requested, true);
		if (flag(&state.runtime_ready))
			mono_gc_finalize_notify();
	}
}

static int catch_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	return sigaction(sig, &sa, NULL);
}

/* The helper thread, SIGUSR1 for --dump-on signal, and SIGTERM and SIGINT
 * where they still have their default action (an ignored one stays so). */
int start_signal_helper(bool dump_signal)
{
	sigset_t all, old;
	int rc;

	if (sem_init(&state.signal_sem, 0, 0) != 0)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&state.signal_thread, NULL, signal_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	state.signal_thread_started = true;
	for (size_t i = 0; i < N_ENDING; i++) {
		struct sigaction now;

		if (sigaction(ending_signals[i], NULL, &now) == 0 &&
		    now.sa_handler == SIG_DFL)
			catch_signal(ending_signals[i]);
	}
	return dump_signal ? catch_signal(DUMP_SIGNAL) : 0;
}

/* The signals back to their default action where they are still ours
 * (SIGUSR1 ignored: one more would end the program). Called on the helper
 * thread itself by end_by_signal: it is not joined, it ends with the
 * process. */
void stop_signal_helper(void)
{
	struct sigaction now;

	if (!state.signal_thread_started)
		return;
	for (size_t i = 0; i < N_ENDING; i++)
		if (sigaction(ending_signals[i], NULL, &now) == 0 &&
		    now.sa_handler == on_dump_signal)
			signal(ending_signals[i], SIG_DFL);
	if (sigaction(DUMP_SIGNAL, NULL, &now) == 0 &&
	    now.sa_handler == on_dump_signal)
		signal(DUMP_SIGNAL, SIG_IGN);
	set_flag(&state.signal_quit, true);
	sem_post(&state.signal_sem);
	if (!pthread_equal(pthread_self(), state.signal_thread))
		pthread_join(state.signal_thread, NULL);
	state.signal_thread_started = false;
}
