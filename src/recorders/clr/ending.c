/*
 * ending.c - the signals of the CoreCLR profiler: SIGUSR1 asks for a
 * dump (--dump-on signal); SIGTERM and SIGINT take the exit dump and close
 * the trace before the program ends as it would have.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/say.h"
#include "util/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static void on_dump_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&state.dumps_asked, 1);
	request(REQ_DUMP);
}

void catch_dump_signal(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_dump_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(DUMP_SIGNAL, &sa, NULL) != 0)
		say("cannot catch SIGUSR1 for dump=signal: dumping at exit "
		    "only");
}

/*
 * SIGTERM and SIGINT: the runtime's own handling ends the program without
 * the profiler's Shutdown, so without the exit dump, and leaves the trace
 * unclosed. Caught here at load (where the runtime left the default
 * action or a handler of its own), they wake the ender thread, which takes
 * the exit dump while the runtime still runs, closes the trace, puts back
 * what was there before and sends the signal again: the program then ends
 * as it would have. A handler the program installs later (through the
 * runtime: PosixSignalRegistration, Console.CancelKeyPress) comes first;
 * the runtime hands the signal to the one it found, ours, when the program
 * does not cancel it.
 */
static const int ending_signals[] = {SIGTERM, SIGINT};
#define N_ENDING ARRAY_SIZE(ending_signals)

static void on_ending_signal(int sig)
{
	int saved = errno;

	atomic_store(&state.ending_signal, sig);
	sem_post(&state.ending); /* async-signal-safe */
	errno = saved;
}

static void *ender_main(void *arg)
{
	int sig;

	(void)arg;
	while (sem_wait(&state.ending) != 0 && errno == EINTR)
		;
	sig = atomic_load(&state.ending_signal);
	if (state.trace.rec && !flag(&state.trace.guard.closed) &&
	    !flag(&state.exiting)) {
		if (!dump_now(EXIT_DUMP_WAIT_MS))
			say("%s: no dump at exit: the runtime did not collect "
			    "within %d seconds", state.trace.output,
			    EXIT_DUMP_WAIT_MS / 1000);
		set_flag(&state.exiting, true);
		close_recorder();
	}
	for (size_t i = 0; i < N_ENDING; i++)
		if (ending_signals[i] == sig)
			sigaction(sig, &state.before_ours[i], NULL);
	kill(getpid(), sig);
	return NULL;
}

/* The ender thread, and the signals where nothing ignores them. */
void catch_ending_signals(void)
{
	struct sigaction sa;
	sigset_t all, old;
	pthread_t ender;
	int rc;

	if (sem_init(&state.ending, 0, 0) != 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ender, NULL, ender_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		say("cannot start a thread for SIGTERM and SIGINT: no dump "
		    "when they come");
		return;
	}
	pthread_detach(ender);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_ending_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < N_ENDING; i++) {
		struct sigaction *before = &state.before_ours[i];

		if (sigaction(ending_signals[i], NULL, before) == 0 &&
		    before->sa_handler != SIG_IGN)
			sigaction(ending_signals[i], &sa, NULL);
	}
}
