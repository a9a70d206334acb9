/*
 * clr-profiler.c - libheaptrace-clr: a CoreCLR profiler that records the
 * runtime's GCs and heap walks through the heaptrace shim.
 *
 *   CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={any GUID}
 *   CORECLR_PROFILER_PATH=/path/libheaptrace-clr.so
 *   HEAPTRACE_CLR_OPTIONS=dump-on=major,every=1,alloc HEAPTRACE_OUTPUT=FILE
 *   dotnet app.dll
 *
 * (`heaptrace record` sets these; `heaptrace record --pid` attaches it to
 * a running process instead: attach.c.) What the runtime tells, and what it
 * becomes in the trace (doc/design.md, "The CLR"):
 *   - GarbageCollectionStarted: the generation bounds, then gc_started
 *     (collected generations as a bit set, induced or not, our count of
 *     GCs); GarbageCollectionFinished: the bounds after it, then
 *     gc_finished.
 *   - MovedReferences2 and SurvivingReferences2: moved_references and
 *     surviving_references, blocks as given (the CLR reports every
 *     survivor: the header says reports_survivors).
 *   - the heap walk the runtime makes after each GC, when this GC is one
 *     to dump: RootReferences2 as root_references with kinds, flags and
 *     ids; ConditionalWeakTableElementReferences as extra references from
 *     each key to its value (flagged HT_REF_DEPENDENT); ObjectReferences as
 *     one object_references each, with its size. They land inside the GC:
 *     a GC dump. The objects of the non-GC heap (string literals, frozen
 *     RuntimeType objects), which the walk's objects reference, are each
 *     a root of kind other (the runtime never frees them), from a list
 *     taken with EnumerateNonGCObjects; the list's objects are added to
 *     the dump when the walk did not report them itself (tables.c).
 *   - ObjectAllocated (alloc): object_allocated; ThreadCreated ("thread
 *     N", its system id) and ThreadNameChanged: thread.
 *   - field identity: ObjectReferences gives no offsets, but the object's
 *     memory may be read there. Each class's reference fields (its own
 *     and inherited, from GetClassLayout and the fields' signatures) are
 *     declared by a `fields` event when the class finishes loading, on the
 *     loading thread; in the walk, the pointer each field holds is matched
 *     with the references the runtime reports, which get that field as
 *     ref_fields (0: an array element, a reference inside an embedded
 *     struct, or a class without a table yet).
 *
 * Names. Metadata may not be read inside GC callbacks, and a dump's names
 * must be in the trace before the dump ends. The walk adds the class of
 * each object (and the function of each stack root) to a lock-free set;
 * at the end of a dump GC the collecting thread wakes the recorder thread
 * (our own, not the runtime's) and waits, bounded, while it names the new
 * ids with the metadata interfaces; then the GC is closed. Classes of
 * allocations are named by that thread as they come.
 *
 * Dumps at other times (--dump-on exit or signal, and the one at exit)
 * are collections forced with ForceGC from a thread of ours that has no
 * profiler callback on its stack.
 *
 * GC callbacks run with the program's threads suspended, possibly inside
 * malloc: that path uses the shim, atomics, and memory allocated before.
 *
 * The parts are listed in clr.h. This file loads the profiler (the
 * runtime calls Initialize, or InitializeForAttach through attach.c) and
 * closes the trace (Shutdown, exit, a signal).
 */
#include "recorders/clr/clr.h"
#include "recorders/core/report.h"
#include "recorders/core/restore.h"
#include "recorders/core/say.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ht_config.h"

struct clr_state state;

/* ---- closing --------------------------------------------------------------- */

/* HEAPTRACE_VERBOSE: what the shim saw, and what this recorder dropped. */
static void report_stats(void)
{
	struct ht_record_stats st;

	gc_events_report(getenv("HEAPTRACE_VERBOSE") != NULL);
	if (!getenv("HEAPTRACE_VERBOSE"))
		return;
	ht_recorder_stats(state.trace.rec, &st);
	say("%s: %llu event%s, %llu GC%s, %llu bytes (%llu before "
	    "compression), %llu wait%s for a buffer, %llu event%s dropped, "
	    "%llu dependent handle%s before the key's fields, %llu dropped, "
	    "%llu GC%s with generation bounds cut, %llu dump%s named late "
	    "(the longest wait for names %llu ms), %llu class%s without a "
	    "field table, %llu string%s with their text", state.trace.output,
	    (unsigned long long)st.events, plural_s(st.events),
	    (unsigned long long)st.gcs, plural_s(st.gcs),
	    (unsigned long long)st.bytes_written,
	    (unsigned long long)st.bytes_uncompressed,
	    (unsigned long long)st.waits, plural_s(st.waits),
	    (unsigned long long)st.dropped_events, plural_s(st.dropped_events),
	    (unsigned long long)state.dependents_early,
	    plural_s(state.dependents_early),
	    (unsigned long long)state.dependents_dropped,
	    (unsigned long long)state.bounds_cut, plural_s(state.bounds_cut),
	    (unsigned long long)state.naming_late,
	    plural_s(state.naming_late),
	    (unsigned long long)state.naming_longest_ms,
	    (unsigned long long)state.fields_failed,
	    state.fields_failed == 1 ? "" : "es",
	    (unsigned long long)state.strings_valued,
	    plural_s(state.strings_valued));
	stacks_report();
	sites_report();
}

/* Closes the trace once no callback is recording (waiting a little for
 * one that is); a callback that comes later records nothing. */
void close_recorder(void)
{
	if (!state.trace.rec || !guard_close(&state.trace.guard))
		return;
	stop_recorder_thread();
	trace_finish(&state.trace, report_stats);
	places_forget();
}

/* The exit dump, forced from our thread while the runtime still runs
 * (Shutdown is the last callback where it may be asked anything). */
clr_hresult on_shutdown(CLR_THIS)
{
	(void)self;
	if (!state.trace.rec || flag(&state.trace.guard.closed))
		return CLR_S_OK;
	if (!dump_now(EXIT_DUMP_WAIT_MS))
		say("%s: no dump at exit: the runtime did not collect within "
		    "%d seconds", state.trace.output, EXIT_DUMP_WAIT_MS / 1000);
	set_flag(&state.exiting, true);
	close_recorder();
	if (state.attached)
		attach_hang_up();
	return CLR_S_OK;
}

/* For an exit that skips the runtime's shutdown (exit() from native code,
 * Environment.Exit is not one). */
static void at_exit(void)
{
	close_recorder();
}

/* ---- loading --------------------------------------------------------------- */

/* Sets or (value NULL) removes a variable in the C library's environment
 * and in the runtime's own copy, which is what processes the program
 * starts inherit (ICorProfilerInfo11). */
static void put_env(const char *name, const char *value)
{
	uint16_t wname[256], wvalue[4096];

	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
	if (state.info_level < 11 || clrn_to_utf16(wname, 256, name) < 0 ||
	    (value && clrn_to_utf16(wvalue, 4096, value) < 0))
		return;
	state.info->vtbl->SetEnvironmentVariable(state.info, wname,
						 value ? wvalue : NULL);
}

/* `heaptrace record` changes CORECLR_* and others for the program and
 * saves their old values (HEAPTRACE_RESTORE): put them back, so that
 * processes the program starts are not recorded into the same file.
 * Loaded by hand, profiling is turned off for them. */
static void restore_clr_environment(void)
{
	/* loaded by hand: the program's children would record into the
	 * same trace */
	if (!restore_environment(put_env))
		put_env("CORECLR_ENABLE_PROFILING", NULL);
}

static void runtime_version(char *out, size_t len)
{
	clr_wchar w[128];
	clr_ulong n = 0;
	uint16_t major = 0, minor = 0, build = 0, qfe = 0, instance = 0;
	int32_t type = 0;

	snprintf(out, len, "?");
	if (CLR_FAILED(state.info->vtbl->GetRuntimeInformation(
		    state.info, &instance, &type, &major, &minor, &build, &qfe,
		    128, &n, w)))
		return;
	if (n > 0)
		clrn_from_utf16(out, len, w, n < 128 ? n : 128);
	else
		snprintf(out, len, "%u.%u.%u", major, minor, build);
}

/* The shim's buffers are resident from the start: 8 MiB rather than its
 * default 32. A GC may record from several threads (server GC). */
static const struct ht_record_options record_options = {
	.buffer_size = 512 << 10,
	.buffers = 16,
	.compression_level = -1,
	.times = true, /* GC starts and finishes, dumps: for pauses */
};

static bool open_clr_trace(void)
{
	char version[128];
	struct trace_metadata meta;
	/* the recorders' metadata, and attached and sites of the CLR's */
	struct ht_metadata m[ARRAY_SIZE(meta.m) + 2];
	struct ht_header h = {
		.runtime = "clr",
		.runtime_version = version,
		.reports_survivors = true,
	};

	runtime_version(version, sizeof(version));
	trace_metadata_of(&meta, "libheaptrace-clr " HT_VERSION, &state.opt,
			  state.opt.values && state.string_layout ? "fields"
								  : NULL);
	memcpy(m, meta.m, meta.n * sizeof(*m));
	if (state.attached)
		m[meta.n++] = (struct ht_metadata){"attached", "yes"};
	if (sites_metadata())
		m[meta.n++] = (struct ht_metadata){"sites", sites_metadata()};
	h.metadata = m;
	h.n_metadata = meta.n;
	state.trace.rec = trace_open(state.trace.output, &h, &record_options);
	return state.trace.rec != NULL;
}

/* The highest ICorProfilerInfo the runtime gives, 4 at least. */
static bool get_info(void *unknown)
{
	static const struct {
		int level;
		struct clr_guid iid;
	} levels[] = {
		{14, CLR_IID_INFO14}, {11, CLR_IID_INFO11},
		{10, CLR_IID_INFO10}, {5, CLR_IID_INFO5}, {4, CLR_IID_INFO4},
	};
	struct clr_info *u = unknown;

	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		void *p = NULL;

		if (u->vtbl->QueryInterface(u, &levels[i].iid, &p) ==
			    CLR_S_OK && p) {
			state.info = p;
			state.info_level = levels[i].level;
			return true;
		}
	}
	return false;
}

static bool allocate_tables(void)
{
	state.bounds_cap = FIRST_BOUNDS;
	state.clr_bounds = calloc(FIRST_BOUNDS, sizeof(*state.clr_bounds));
	state.bounds = calloc(FIRST_BOUNDS, sizeof(*state.bounds));
	state.dependents_mask = FIRST_DEPENDENTS - 1;
	state.dependents = calloc(FIRST_DEPENDENTS, sizeof(*state.dependents));
	state.fields = field_map_new(FIRST_FIELD_CLASSES);
	return state.clr_bounds && state.bounds && state.dependents &&
	       state.fields &&
	       pthread_mutex_init(&state.fields_lock, NULL) == 0 &&
	       idset_init(&state.classes_seen, 65536) == 0 &&
	       idset_init(&state.classes_named, 16384) == 0 &&
	       idset_init(&state.methods_seen, 4096) == 0 &&
	       idset_init(&state.methods_named, 4096) == 0 &&
	       idset_init(&state.threads_named, 1024) == 0;
}

/* Loaded at the start (attach_options NULL: the options are in the
 * environment) or attached to a process that runs already (attach.c:
 * the options come from heaptrace). */
clr_hresult start_recording(void *info_unknown, const char *attach_options)
{
	char err[256], *options, *env_output;
	/* stack snapshots: which thread holds a local (stacks.c) */
	clr_ulong mask = CLR_MONITOR_GC | CLR_MONITOR_THREADS |
			 CLR_MONITOR_CLASS_LOADS | CLR_ENABLE_STACK_SNAPSHOT;

	state.wake[0] = state.wake[1] = -1;
	atomic_store(&state.control, -1);
	if (!get_info(info_unknown)) {
		say("the runtime offers no ICorProfilerInfo4; not recording");
		return CLR_E_FAIL;
	}
	/* read before the environment is put back, which unsets them */
	options = attach_options ? (char *)attach_options
				 : getenv("HEAPTRACE_CLR_OPTIONS");
	options = strdup(options ? options : "");
	env_output = attach_options ? NULL : getenv("HEAPTRACE_OUTPUT");
	env_output = strdup(env_output ? env_output : REC_DEFAULT_OUTPUT);
	if (!attach_options) {
		report_channel_open(getenv("HEAPTRACE_REPORT_FD"));
		restore_clr_environment();
	}
	if (!options || !env_output) {
		say("out of memory; not recording");
		goto fail;
	}
	/* attached: the grammar of the JVMTI agent's attach (control=), and
	 * no alloc */
	if ((attach_options ? rec_parse_agent_options
			    : rec_parse_options)(options, &state.opt, err,
						 sizeof(err)) < 0) {
		say("%s: %s; not recording", attach_options ? "the options "
		    "heaptrace gave" : "HEAPTRACE_CLR_OPTIONS", err);
		goto fail;
	}
	/* attached: heaptrace hears of everything from here on */
	if (state.attached && (!state.opt.control || attach_connect() < 0))
		goto fail;
	if (state.attached)
		say_as("clr", attach_tell);
	if (state.attached && state.opt.allocations) {
		say("allocations are recorded only from the program's start, "
		    "not attached; not recording");
		goto fail;
	}
	state.trace.output = state.opt.output ? strdup(state.opt.output)
					 : strdup(env_output);
	if (!state.trace.output || !allocate_tables()) {
		say("out of memory; not recording");
		goto fail;
	}
	if (!(state.string_layout = string_layout()) && state.opt.values)
		say("the runtime gives no string layout: no values are "
		    "recorded");
	if (state.opt.allocations)
		mask |= CLR_ENABLE_OBJECT_ALLOCATED |
			CLR_MONITOR_OBJECT_ALLOCATED;
	if (!sites_start(&mask))
		goto fail;
	/* what the runtime allows once the program runs */
	if (state.attached)
		mask &= CLR_ALLOWABLE_AFTER_ATTACH;
	/* With the moves from the events (gc_events.c), COR_PRF_MONITOR_GC
	 * is asked for at the start all the same: that is what turns
	 * background GC off for the run. The first GC not dumped drops it,
	 * and a dump's GC takes it back for its heap walk. */
	state.moves_by_events = state.info_level >= 12 &&
				moves_by_events_wanted();
	state.mask = mask & ~CLR_MONITOR_GC;
	set_flag(&state.monitoring_gc, true);
	if (recording_floor()) {
		free(options);
		free(env_output);
		if (state.moves_by_events && !gc_events_start())
			state.moves_by_events = false;
		return set_event_mask(mask);
	}
	if (!open_clr_trace())
		goto fail;
	if (CLR_FAILED(set_event_mask(mask))) {
		say("the runtime refused the event mask 0x%x; not recording",
		    (unsigned)mask);
		goto fail_open;
	}
	if ((state.moves_by_events || sites_keywords()) &&
	    !gc_events_start()) {
		if (state.moves_by_events)
			say("the runtime refused its movement events: the "
			    "moves come from COR_PRF_MONITOR_GC");
		if (sites_keywords())
			say("the runtime refused its allocation samples: no "
			    "sites are recorded");
		state.moves_by_events = false;
	}
	if (start_recorder_thread() < 0) {
		say("cannot start the recorder thread; not recording");
		goto fail_open;
	}
	if (state.attached) {
		if (attach_serve() < 0) {
			say("cannot start the control thread; not recording");
			stop_recorder_thread();
			goto fail_open;
		}
	} else {
		if (state.opt.dump_on == DUMP_ON_SIGNAL)
			catch_dump_signal();
		catch_ending_signals();
		atexit(at_exit);
	}
	free(options);
	free(env_output);
	return CLR_S_OK;
fail_open:
	ht_recorder_close(state.trace.rec, NULL);
	state.trace.rec = NULL;
fail:
	free(options);
	free(env_output);
	if (state.attached) {
		/* the runtime unloads the library: nothing of ours stays */
		int fd = atomic_exchange(&state.control, -1);

		say_as("clr", NULL);
		if (fd >= 0)
			close(fd);
	}
	return CLR_E_FAIL;
}

clr_hresult on_initialize(CLR_THIS, void *info_unknown)
{
	(void)self;
	say_as("clr", NULL);
	return start_recording(info_unknown, NULL);
}
