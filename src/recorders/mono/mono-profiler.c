/*
 * mono-profiler.c - libmono-profiler-heaptrace: a Mono profiler module that
 * records the runtime's GCs and heap walks through the heaptrace shim.
 *
 *   mono --profile=heaptrace:dump-on=major,every=1,alloc,output=FILE prog.exe
 *
 * What Mono tells, and what it becomes in the trace:
 *   - GC start and end with the generation: gc_started / gc_finished. One
 *     recorded GC runs from a START event (or, for the end of a concurrent
 *     major begun in an earlier pause, its END) to the next START or the end
 *     of the stop-the-world pause, whichever comes first, so that GCs never
 *     nest and never stay open while the program runs.
 *   - generations: the nursery's bounds at each GC's start, both
 *     generations' at its finish, and the nursery objects that survived
 *     in place (pinned) as surviving blocks, from the roots Mono reports
 *     after every collection and from the walk.
 *   - object moves (old/new pairs): moved_references blocks of length 1.
 *   - root slots, with the source Mono registered their range with:
 *     root_references with kinds (stack, finalizer, handle, other) and ids
 *     (the thread of a stack, the class of a static field).
 *   - the heap walk: CLR-style object_references inside the GC, with class,
 *     size and the object's non-null references; Mono hands an object with
 *     many references over in several calls, which become one event each,
 *     all but the last flagged MORE_REFERENCES.
 *   - class names (at class load), thread names, optionally allocations.
 *   - field identity: each reference of the walk comes with the offset
 *     it was read from; the class's reference field at that offset (its
 *     own or inherited; 0 for array elements and for references inside
 *     an embedded struct) goes with it as ref_fields, each field declared
 *     once by a `fields` event. A root in a class's statics gets the
 *     static field at its address as root_fields.
 *
 * Mono walks the heap only from the PRE_START_WORLD event, and only a walk
 * after a serial major collection sees live objects alone (after a minor
 * one, the old generation still holds the dead). So a dump is taken at a
 * serial major collection; when one is wanted at another moment (after a
 * minor or concurrent collection, on a signal) it is requested: the
 * finalizer thread is woken and forces a serial major collection. At
 * shutdown the recorder forces one itself.
 *
 * Everything between stop-world and start-world runs with the program's
 * threads suspended, possibly inside malloc or stdio: that path uses only
 * the shim's ht_* calls, Mono's plain getters, atomics and data allocated
 * beforehand (rootmap.h, idset.h).
 *
 * The parts are listed in mono.h. This file loads the module (Mono calls
 * mono_profiler_init_heaptrace), takes the exit dump and closes the trace.
 */
#include "recorders/mono/mono.h"
#include "recorders/core/report.h"
#include "recorders/core/restore.h"
#include "recorders/core/say.h"
#include "util/alloc.h"

#include <mono/jit/jit.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/mono-gc.h>
#include <mono/metadata/threads.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ht_config.h"

struct mono_state state;

/* ---- shutdown ------------------------------------------------------------ */

/* The exit dump: a collection forced here, on a thread of the runtime,
 * before it tears anything down. */
void on_shutdown_begin(MonoProfiler *prof)
{
	(void)prof;
	if (flag(&state.trace.guard.closed))
		return;
	set_flag(&state.requested, true);
	mono_gc_collect(mono_gc_max_generation());
	set_flag(&state.stopping, true);
}

/* HEAPTRACE_VERBOSE: what the shim saw, waits for free buffers included
 * (a recording slower than its writer waits inside GC pauses). */
static void report_stats(void)
{
	struct ht_record_stats st;
	uint64_t roots, unmapped;

	if (!getenv("HEAPTRACE_VERBOSE"))
		return;
	ht_recorder_stats(state.trace.rec, &st);
	roots = atomic_load(&state.roots.dropped);
	unmapped = atomic_load(&state.classes_unmapped);
	say("%s: %llu event%s, %llu GC%s, %llu bytes (%llu before "
	    "compression), %llu wait%s for a buffer, %llu event%s dropped, "
	    "%llu root update%s dropped, %llu class%s without a field table, "
	    "%llu string%s with their text",
	    state.trace.output,
	    (unsigned long long)st.events, plural_s(st.events),
	    (unsigned long long)st.gcs, plural_s(st.gcs),
	    (unsigned long long)st.bytes_written,
	    (unsigned long long)st.bytes_uncompressed,
	    (unsigned long long)st.waits, plural_s(st.waits),
	    (unsigned long long)st.dropped_events, plural_s(st.dropped_events),
	    (unsigned long long)roots, plural_s(roots),
	    (unsigned long long)unmapped, unmapped == 1 ? "" : "es",
	    (unsigned long long)state.strings_valued,
	    plural_s(state.strings_valued));
	if (state.opt.sites) {
		uint64_t walks, stacks, unresolved;

		sites_stats(&walks, &stacks, &unresolved);
		say("%s: %llu allocation%s sampled, %llu stack%s, %llu frame%s "
		    "without a line", state.trace.output,
		    (unsigned long long)walks, plural_s(walks),
		    (unsigned long long)stacks, plural_s(stacks),
		    (unsigned long long)unresolved, plural_s(unresolved));
	}
}

/* Closes the trace once no callback is recording (waiting a little for
 * one that is); a callback that comes later records nothing. */
void close_recorder(void)
{
	if (!guard_close(&state.trace.guard))
		return;
	stop_signal_helper();
	trace_finish(&state.trace, report_stats);
}

static void on_shutdown_end(MonoProfiler *prof)
{
	(void)prof;
	close_recorder();
}

/* For an exit that skips the runtime's shutdown: exit() from native code,
 * or Mono's own on an unhandled exception, which leaves the runtime whole
 * and its threads running. The exit dump comes first where the runtime can
 * still take one (outside a pause, before its shutdown began). */
static void at_exit(void)
{
	if (!state.trace.rec)
		return;
	if (flag(&state.runtime_ready) && !flag(&state.stopping) &&
	    !flag(&state.trace.guard.closed) && !flag(&state.in_pause)) {
		mono_thread_attach(mono_get_root_domain());
		on_shutdown_begin(NULL);
	}
	close_recorder();
}

/* ---- loading ------------------------------------------------------------- */

/* Mono looks for a profiler in its own installation directory before the
 * library path: say so when that is not the module `heaptrace record`
 * meant to load. */
static void check_module(const char *expected)
{
	char want[PATH_MAX], have[PATH_MAX];
	Dl_info info;

	if (!expected || !dladdr((void *)mono_profiler_init_heaptrace, &info) ||
	    !info.dli_fname || !realpath(expected, want) ||
	    !realpath(info.dli_fname, have) || strcmp(want, have) == 0)
		return;
	say("loaded %s rather than %s: Mono found that copy first", have,
	    want);
}

/* The shim's buffers are resident from the start: 8 MiB rather than its
 * default 32 keeps a small program small. A handful of threads record at
 * once here (the collecting one, and the allocating ones with alloc). */
static const struct ht_record_options record_options = {
	.buffer_size = 512 << 10,
	.buffers = 16,
	.compression_level = -1, /* 0 would be none */
	.times = true, /* GC starts and finishes, dumps: for pauses */
};

static bool open_mono_trace(void)
{
	char *version = mono_get_runtime_build_info();
	struct trace_metadata meta;
	struct ht_header h = {
		.runtime = "mono",
		.runtime_version = version,
		/* every survivor inside the bounds recorded at a GC's start
		 * (the nursery): moved, or pinned and reported as a root */
		.reports_survivors = true,
	};

	/* the recorders' metadata, and sites (sites.c) last */
	struct ht_metadata m[ARRAY_SIZE(meta.m) + 1];
	char interval[32];
	const char *sites = sites_metadata(interval, sizeof(interval));

	trace_metadata_of(&meta, "libmono-profiler-heaptrace " HT_VERSION,
			  &state.opt,
			  state.opt.values && little_endian() ? "strings"
							      : NULL);
	memcpy(m, meta.m, meta.n * sizeof(*m));
	h.metadata = m;
	h.n_metadata = meta.n;
	if (sites)
		m[h.n_metadata++] = (struct ht_metadata){"sites", sites};
	state.trace.rec = trace_open(state.trace.output, &h, &record_options);
	mono_free(version);
	return state.trace.rec != NULL;
}

static void install_callbacks(void)
{
	MonoProfilerHandle h = state.handle;

	mono_profiler_set_runtime_initialized_callback(h,
						       on_runtime_initialized);
	mono_profiler_set_runtime_shutdown_begin_callback(h, on_shutdown_begin);
	mono_profiler_set_runtime_shutdown_end_callback(h, on_shutdown_end);
	mono_profiler_set_class_loaded_callback(h, on_class_loaded);
	mono_profiler_set_thread_name_callback(h, on_thread_name);
	mono_profiler_set_gc_event_callback(h, on_gc_phase);
	mono_profiler_set_gc_moves_callback(h, on_moves);
	/* from the start: Mono notes the pinned objects it will report only
	 * while a roots callback is installed */
	mono_profiler_set_gc_roots_callback(h, on_gc_roots);
	mono_profiler_set_gc_root_register_callback(h, on_root_register);
	mono_profiler_set_gc_root_unregister_callback(h, on_root_unregister);
	mono_profiler_set_gc_finalized_callback(h, on_finalized);
	if ((state.opt.allocations || state.opt.sites) &&
	    mono_profiler_enable_allocations())
		mono_profiler_set_gc_allocation_callback(h, on_allocation);
}

static const char *args_of(const char *desc)
{
	const char *colon = desc ? strchr(desc, ':') : NULL;

	return colon ? colon + 1 : "";
}

/* The trace's path: output= in the arguments, else HEAPTRACE_OUTPUT
 * (which `heaptrace record` sets), else the default. */
static char *output_path(const char *env_output)
{
	if (state.opt.output)
		return strdup(state.opt.output);
	return strdup(env_output ? env_output : REC_DEFAULT_OUTPUT);
}

void mono_profiler_init_heaptrace(const char *desc)
{
	char err[256], *env_output = getenv("HEAPTRACE_OUTPUT");

	say_as("mono", NULL);
	/* read before the environment is put back, which unsets them */
	check_module(getenv("HEAPTRACE_MODULE"));
	report_channel_open(getenv("HEAPTRACE_REPORT_FD"));
	env_output = env_output ? strdup(env_output) : NULL;
	restore_environment(put_process_env);
	if (rec_parse_options(args_of(desc), &state.opt, err,
			       sizeof(err)) < 0) {
		say("%s; not recording", err);
		free(env_output);
		return;
	}
	state.trace.output = output_path(env_output);
	free(env_output);
	if (!state.trace.output || rootmap_init(&state.roots, 512) < 0 ||
	    idset_init(&state.classes, 8192) < 0 ||
	    field_tables_alloc(&state.ft, FIRST_FIELD_CLASSES,
			       FIRST_FIELD_SLOTS) < 0 ||
	    pthread_mutex_init(&state.early_lock, NULL) != 0) {
		say("out of memory; not recording");
		return;
	}
	state.cap_dests = FIRST_DESTINATIONS;
	state.dests = malloc(state.cap_dests * sizeof(*state.dests));
	if (!state.dests)
		state.cap_dests = 0; /* no walked GC proves the old's dead */
	if (sites_start() < 0) {
		say("out of memory; not recording");
		return;
	}
	state.max_gen = mono_gc_max_generation();
	if (state.max_gen < 0)
		state.max_gen = 1;
	if (!open_mono_trace())
		return;
	if (start_signal_helper(state.opt.dump_on == DUMP_ON_SIGNAL) < 0)
		say("cannot catch SIGUSR1 for dump=signal, SIGTERM and SIGINT: "
		    "no dump when they come");
	state.handle = mono_profiler_create(&state.prof);
	install_callbacks();
	atexit(at_exit);
}
