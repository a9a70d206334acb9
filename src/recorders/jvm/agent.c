/*
 * agent.c - libheaptrace-jvmti.so, a JVMTI agent that records a Java
 * program's GCs and heap dumps through the recording shim (record.h):
 *
 *   java -agentpath:/path/libheaptrace-jvmti.so=dump-on=major,output=T.ht ...
 *
 * Every GC becomes gc_started ... gc_finished, recorded in JVMTI's GC
 * events. A heap dump (dump.c) cannot be taken there (no JVMTI heap
 * function may run inside a GC event), so the GC finish event wakes an
 * agent thread, which takes it when the mode asks for one (dump-on=major:
 * after major GCs; every-gc: after every GC; with every=N, after every Nth
 * of those). With dump-on=signal, SIGUSR1 asks the agent thread for one.
 * In every mode a dump is taken when the JVM is asked for a data dump
 * (jcmd PID JVMTI.data_dump, or SIGQUIT), in the asking thread, so that
 * jcmd returns once it is taken; and at VM death, where the recorder is
 * closed.
 *
 * With sites, JVMTI's sampled allocations are recorded with their stacks
 * (sites.c).
 *
 * Loaded into a running JVM (Agent_OnAttach, attach.c), the agent records
 * from then on, the same way, until heaptrace record --pid tells it to
 * stop: then it takes a last dump ("at detach") and closes the trace, and
 * stays loaded but idle, since HotSpot cannot unload an agent, until it is
 * attached again: then it records anew, into the new trace.
 */
#include "recorders/jvm/agent.h"
#include "recorders/core/dump_policy.h"
#include "recorders/core/report.h"
#include "recorders/core/restore.h"
#include "recorders/core/trace.h"
#include "util/alloc.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* JVMTI calls the events without a context: there is one agent. */
static struct agent the_agent;

/* Each message goes to heaptrace too: attached, the JVM's standard error
 * is not the user's. */
static void tell_heaptrace(const char *message)
{
	control_report(&the_agent, message);
}

/* ---- dumps --------------------------------------------------------------- */

void agent_take_dump(struct agent *ag, JNIEnv *jni, const char *why)
{
	jvmtiEnv *jv = ag->jvmti;

	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	if (!ag->dumps_over)
		dump_heap(ag, jni, why);
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
}

/* ---- GC events: on the VM thread, inside the pause ----------------------- */

/* Only raw monitor functions may be called here; the shim's ht_gc_* take
 * no lock and allocate nothing. */
static void JNICALL on_gc_start(jvmtiEnv *jv)
{
	struct agent *ag = &the_agent;

	(*jv)->RawMonitorEnter(jv, ag->record_lock);
	/* JVMTI does not say which generations a GC collects */
	if (!ag->closed)
		ht_gc_started(ag->rec, -1, 0, HT_GC_OTHER);
	(*jv)->RawMonitorExit(jv, ag->record_lock);
}

static void JNICALL on_gc_finish(jvmtiEnv *jv)
{
	struct agent *ag = &the_agent;

	(*jv)->RawMonitorEnter(jv, ag->record_lock);
	if (!ag->closed)
		ht_gc_finished(ag->rec);
	(*jv)->RawMonitorExit(jv, ag->record_lock);
	(*jv)->RawMonitorEnter(jv, ag->wake_lock);
	ag->gcs_finished++;
	(*jv)->RawMonitorNotify(jv, ag->wake_lock);
	(*jv)->RawMonitorExit(jv, ag->wake_lock);
}

/* ---- the agent thread ---------------------------------------------------- */

/* GCs since the last call that count for the mode: all of them, or the
 * major ones. */
static uint64_t counted_gcs(struct agent *ag, JNIEnv *jni, uint64_t gcs,
			    long long *majors_seen)
{
	static bool warned;
	long long majors;

	if (ag->opt.dump_on == DUMP_ON_EVERY_GC)
		return gcs;
	majors = gcbeans_major_count(jni);
	if (majors < 0) {
		if (!warned)
			say("cannot tell major GCs from minor ones "
				   "(java.management unavailable): dumping "
				   "after every GC");
		warned = true;
		return gcs;
	}
	gcs = majors > *majors_seen ? (uint64_t)(majors - *majors_seen) : 0;
	*majors_seen = majors;
	return gcs;
}

/* SIGUSR1 asks for a dump (--dump-on signal). A signal handler can call
 * no JVMTI function: it counts, and the agent thread looks at the count
 * every SIGNAL_POLL_MS. */
#define SIGNAL_POLL_MS 100
static atomic_ulong signal_requests;

static void on_sigusr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&signal_requests, 1);
}

static int catch_sigusr1(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_sigusr1;
	return sigaction(SIGUSR1, &sa, NULL);
}

static void JNICALL agent_main(jvmtiEnv *jv, JNIEnv *jni, void *arg)
{
	struct agent *ag = arg;
	bool gc_dumps = dump_after_gcs(&ag->opt);
	jlong poll = ag->opt.dump_on == DUMP_ON_SIGNAL ? SIGNAL_POLL_MS : 0;
	uint64_t gcs_seen = 0, pending = 0;
	unsigned long signals_seen = 0;
	long long majors_seen = 0;

	/* attached, the JVM has collected before: only what follows counts */
	if (ag->attached && ag->opt.dump_on == DUMP_ON_MAJOR)
		majors_seen = gcbeans_major_count(jni);

	(*jv)->RawMonitorEnter(jv, ag->wake_lock);
	for (;;) {
		unsigned long signals;
		uint64_t gcs;

		while (!ag->stop && ag->gcs_finished == gcs_seen &&
		       atomic_load(&signal_requests) == signals_seen)
			(*jv)->RawMonitorWait(jv, ag->wake_lock, poll);
		if (ag->stop)
			break;
		gcs = ag->gcs_finished - gcs_seen;
		gcs_seen = ag->gcs_finished;
		(*jv)->RawMonitorExit(jv, ag->wake_lock);
		/* the trace stays open while this thread runs */
		report_if_failed(ag->rec);
		signals = atomic_load(&signal_requests);
		if (signals != signals_seen) {
			signals_seen = signals;
			agent_take_dump(ag, jni, "on SIGUSR1");
		}
		/* GCs that came while a dump was taken are counted together:
		 * one dump covers them */
		if (gc_dumps && gcs)
			pending += counted_gcs(ag, jni, gcs, &majors_seen);
		if (gc_dumps && pending >= ag->opt.every) {
			pending %= ag->opt.every;
			agent_take_dump(ag, jni, "after a GC");
		}
		(*jv)->RawMonitorEnter(jv, ag->wake_lock);
	}
	ag->thread_running = false;
	(*jv)->RawMonitorNotifyAll(jv, ag->wake_lock);
	(*jv)->RawMonitorExit(jv, ag->wake_lock);
}

static jthread new_thread(JNIEnv *jni, const char *name)
{
	jclass k = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init;
	jstring s;

	if (!k)
		return NULL;
	init = (*jni)->GetMethodID(jni, k, "<init>", "(Ljava/lang/String;)V");
	s = (*jni)->NewStringUTF(jni, name);
	if (!init || !s)
		return NULL;
	return (*jni)->NewObject(jni, k, init, s);
}

int agent_thread(struct agent *ag, JNIEnv *jni, const char *name,
		 jvmtiStartFunction fn, void *arg)
{
	jvmtiEnv *jv = ag->jvmti;
	jthread t = new_thread(jni, name);

	if (t && (*jv)->RunAgentThread(jv, t, fn, arg,
				       JVMTI_THREAD_NORM_PRIORITY) ==
		 JVMTI_ERROR_NONE)
		return 0;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	return -1;
}

static void start_agent_thread(struct agent *ag, JNIEnv *jni)
{
	ag->thread_running = true;
	if (agent_thread(ag, jni, "heaptrace", agent_main, ag) < 0) {
		ag->thread_running = false;
		say("cannot start the agent thread: no dumps after GCs "
			   "or on SIGUSR1");
	}
}

static void JNICALL on_vm_init(jvmtiEnv *jv, JNIEnv *jni, jthread thread)
{
	(void)jv;
	(void)thread;
	start_agent_thread(&the_agent, jni);
	sites_prime(&the_agent, jni);
}

/* ---- dump requests and VM death ------------------------------------------ */

static void JNICALL on_data_dump(jvmtiEnv *jv)
{
	struct agent *ag = &the_agent;
	JNIEnv *jni = NULL;

	(void)jv;
	/* the requesting thread (attach listener, signal dispatcher) is a
	 * Java thread: it can walk the heap */
	if ((*ag->vm)->GetEnv(ag->vm, (void **)&jni, JNI_VERSION_1_8) !=
	    JNI_OK) {
		say("dump request from a thread without JNI: ignored");
		return;
	}
	agent_take_dump(ag, jni, "requested");
}

static void stop_agent_thread(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;

	(*jv)->RawMonitorEnter(jv, ag->wake_lock);
	ag->stop = true;
	(*jv)->RawMonitorNotifyAll(jv, ag->wake_lock);
	while (ag->thread_running)
		(*jv)->RawMonitorWait(jv, ag->wake_lock, 0);
	(*jv)->RawMonitorExit(jv, ag->wake_lock);
}

/* Under dump_lock, so that whoever finishes second waits until the trace
 * is closed: VM death must not let the JVM exit before that. */
static void close_recorder(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;
	struct ht_recorder *rec;

	(*jv)->RawMonitorEnter(jv, ag->record_lock);
	rec = ag->closed ? NULL : ag->rec;
	ag->closed = true;
	(*jv)->RawMonitorExit(jv, ag->record_lock);
	if (rec && trace_close_recorder(rec) && ag->opt.verbose)
		say("%llu dump%s written to %s",
			   (unsigned long long)ag->dumps_taken,
			   ag->dumps_taken == 1 ? "" : "s", ag->opt.output);
}

void agent_finish(struct agent *ag, JNIEnv *jni, const char *why)
{
	jvmtiEnv *jv = ag->jvmti;

	(*jv)->SetEventNotificationMode(jv, JVMTI_DISABLE,
					JVMTI_EVENT_DATA_DUMP_REQUEST, NULL);
	sites_stop(ag);
	stop_agent_thread(ag);
	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	if (!ag->dumps_over) {
		dump_heap(ag, jni, why);
		ag->dumps_over = true;
		gcbeans_release(jni);
		close_recorder(ag);
	}
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
	/* the GCs of a JVM that goes on are no longer the agent's business */
	(*jv)->SetEventNotificationMode(jv, JVMTI_DISABLE,
					JVMTI_EVENT_GARBAGE_COLLECTION_START,
					NULL);
	(*jv)->SetEventNotificationMode(jv, JVMTI_DISABLE,
					JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
					NULL);
	control_close(ag);
}

static void JNICALL on_vm_death(jvmtiEnv *jv, JNIEnv *jni)
{
	(void)jv;
	agent_finish(&the_agent, jni, "at exit");
}

/* ---- loading ------------------------------------------------------------- */

static char *property(jvmtiEnv *jv, const char *name)
{
	char *value = NULL;

	if ((*jv)->GetSystemProperty(jv, name, &value) != JVMTI_ERROR_NONE)
		return NULL;
	return value;
}

/* The shim's defaults, with the time of each GC and dump: for pauses. */
static const struct ht_record_options record_options = {
	.compression_level = -1,
	.times = true,
};

static int open_recorder(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;
	char *version = property(jv, "java.vm.version");
	char *vm_name = property(jv, "java.vm.name");
	struct ht_metadata meta[7] = {
		{"recorder", "libheaptrace-jvmti"},
		{"object_ids", "jvmti-tags"},
		{"dump_on", dump_on_name(ag->opt.dump_on)},
		{"vm", vm_name ? vm_name : "?"},
	};
	size_t n_meta = 4;
	struct ht_header h = {
		.runtime = "jvm",
		.runtime_version = version,
		.reports_survivors = false,
		.metadata = meta,
	};

	if (ag->attached)
		meta[n_meta++] = (struct ht_metadata){"attached", "yes"};
	/* as the CLR and Mono recorders say what their values are */
	if (ag->opt.values)
		meta[n_meta++] = (struct ht_metadata){"values", "fields"};
	if (sites_metadata(ag))
		meta[n_meta++] = (struct ht_metadata){"sites",
						      sites_metadata(ag)};
	h.n_metadata = n_meta;
	ag->rec = trace_open(ag->opt.output, &h, &record_options);
	(*jv)->Deallocate(jv, (unsigned char *)version);
	(*jv)->Deallocate(jv, (unsigned char *)vm_name);
	return ag->rec ? 0 : -1;
}

static int add_capabilities(jvmtiEnv *jv)
{
	jvmtiCapabilities caps;

	memset(&caps, 0, sizeof(caps));
	caps.can_tag_objects = 1;
	caps.can_generate_garbage_collection_events = 1;
	if ((*jv)->AddCapabilities(jv, &caps) != JVMTI_ERROR_NONE) {
		say("the JVM cannot tag objects or report GCs to an "
			   "agent");
		return -1;
	}
	/* frames' lines and source files (frames.c): without them, frames
	 * are named by class and method alone */
	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	(*jv)->AddCapabilities(jv, &caps);
	return 0;
}

/* Attached, the JVM is past VM init: the agent thread starts at once. */
static int set_events(jvmtiEnv *jv, bool attached, bool sites)
{
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_VM_DEATH,
		JVMTI_EVENT_GARBAGE_COLLECTION_START,
		JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
		JVMTI_EVENT_DATA_DUMP_REQUEST,
	};
	jvmtiEventCallbacks cb;

	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.GarbageCollectionStart = on_gc_start;
	cb.GarbageCollectionFinish = on_gc_finish;
	cb.DataDumpRequest = on_data_dump;
	cb.SampledObjectAlloc = sites_on_sample;
	if ((*jv)->SetEventCallbacks(jv, &cb, (jint)sizeof(cb)) !=
	    JVMTI_ERROR_NONE)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(events); i++)
		if ((*jv)->SetEventNotificationMode(jv, JVMTI_ENABLE, events[i],
						    NULL) != JVMTI_ERROR_NONE)
			return -1;
	if (!attached && (*jv)->SetEventNotificationMode(jv, JVMTI_ENABLE,
			    JVMTI_EVENT_VM_INIT, NULL) != JVMTI_ERROR_NONE)
		return -1;
	if (sites && (*jv)->SetEventNotificationMode(jv, JVMTI_ENABLE,
			    JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL) !=
		    JVMTI_ERROR_NONE)
		return -1;
	return 0;
}

static int create_monitors(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;

	return (*jv)->CreateRawMonitor(jv, "heaptrace record",
				       &ag->record_lock) ||
	       (*jv)->CreateRawMonitor(jv, "heaptrace wake", &ag->wake_lock) ||
	       (*jv)->CreateRawMonitor(jv, "heaptrace dump", &ag->dump_lock) ||
	       (*jv)->CreateRawMonitor(jv, "heaptrace places",
				       &ag->places_lock) ?
	       -1 : 0;
}

static int start_threads(struct agent *ag)
{
	JNIEnv *jni = NULL;

	if ((*ag->vm)->GetEnv(ag->vm, (void **)&jni, JNI_VERSION_1_8) !=
	    JNI_OK) {
		say("attached from a thread without JNI");
		return -1;
	}
	start_agent_thread(ag, jni);
	return control_start(ag, jni);
}

/* Whether an attached recording is going on: its last dump not taken,
 * or its control thread not gone. */
static bool attached_recording_on(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;
	bool on;

	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	on = !ag->dumps_over;
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
	return on || atomic_load(&ag->control_running);
}

/* The tables that say what the last trace declared start empty, so that
 * the next one declares its classes, fields and methods again; objects
 * and classes keep their tags, so ids go on from the last recording's. */
static void forget_the_last_trace(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;

	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	classes_free(&ag->classes);
	classes_init(&ag->classes);
	places_free(&ag->places);
	places_init(&ag->places);
	ag->next_field_id = 1;
	ag->dumps_taken = 0;
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
	(*jv)->RawMonitorEnter(jv, ag->wake_lock);
	ag->stop = false;
	ag->gcs_finished = 0;
	(*jv)->RawMonitorExit(jv, ag->wake_lock);
}

/* The events agent_finish turned off, and the threads. */
static int resume_recording(struct agent *ag)
{
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_GARBAGE_COLLECTION_START,
		JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
		JVMTI_EVENT_DATA_DUMP_REQUEST,
	};
	jvmtiEnv *jv = ag->jvmti;

	if (open_recorder(ag) < 0)
		return -1;
	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	ag->dumps_over = false;
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
	(*jv)->RawMonitorEnter(jv, ag->record_lock);
	ag->closed = false;
	(*jv)->RawMonitorExit(jv, ag->record_lock);
	for (size_t i = 0; i < ARRAY_SIZE(events); i++)
		if ((*jv)->SetEventNotificationMode(jv, JVMTI_ENABLE, events[i],
						    NULL) != JVMTI_ERROR_NONE) {
			say("cannot enable the JVMTI events");
			return -1;
		}
	if (ag->opt.dump_on == DUMP_ON_SIGNAL && catch_sigusr1() < 0) {
		say("cannot catch SIGUSR1 for dump-on=signal");
		return -1;
	}
	return start_threads(ag);
}

/* Sampled allocations are a program's from its start: an agent loaded
 * later records none (heaptrace record refuses --sites with --pid; this
 * is for a jcmd JVMTI.agent_load by hand). */
static void no_sites_when_attached(struct rec_options *opt, bool attached)
{
	if (attached && opt->sites) {
		say("sites are recorded from a program's start only, not "
		    "when attached: none recorded");
		opt->sites = false;
	}
}

/* Attached again once an attached recording has ended: the agent, which
 * HotSpot cannot unload, records anew into the new trace. */
static jint record_again(struct agent *ag, const char *options)
{
	struct rec_options opt;
	char err[512];
	int old = atomic_load(&ag->control);

	if (rec_parse_agent_options(options, &opt, err, sizeof(err)) < 0) {
		say("%s", err);
		return JNI_ERR;
	}
	rec_free_options(&ag->opt);
	ag->opt = opt;
	no_sites_when_attached(&ag->opt, true);
	/* the last recording's reader has left: the descriptor is free */
	atomic_store(&ag->control, -1);
	if (old >= 0)
		close(old);
	if (ag->opt.control && control_connect(ag) < 0)
		return JNI_ERR;
	forget_the_last_trace(ag);
	if (resume_recording(ag) < 0) {
		JNIEnv *jni = NULL;

		if ((*ag->vm)->GetEnv(ag->vm, (void **)&jni,
				      JNI_VERSION_1_8) == JNI_OK)
			agent_finish(ag, jni, "at detach");
		control_close(ag);
		return JNI_ERR;
	}
	return JNI_OK;
}

/* The agent already loaded: launched twice, it records once; attached
 * after an attached recording, it records again; attached during one, or
 * to a JVM launched with it, it refuses. */
static jint loaded_again(struct agent *ag, const char *options, bool attached)
{
	struct rec_options again;
	char err[512];

	if (!attached) {
		say("loaded twice: the second is ignored");
		return JNI_OK;
	}
	if (ag->attached && !attached_recording_on(ag))
		return record_again(ag, options);
	if (rec_parse_agent_options(options, &again, err, sizeof(err)) == 0 &&
	    again.control)
		control_refuse(again.control,
			       ag->attached ? "this JVM is being recorded "
			       "by an attached agent already" :
			       "this JVM runs with the agent already");
	rec_free_options(&again);
	return JNI_ERR;
}

/* Everything but the options and the control socket. */
static jint start_recording(struct agent *ag, JavaVM *vm, bool attached)
{
	report_channel_open(ag->opt.report);
	/* JDK_JAVA_OPTIONS, when `heaptrace record` set it, is not for the
	 * JVMs the program starts: Java reads the environment for them only
	 * later, when the program first asks */
	if (!attached)
		restore_environment(put_process_env);
	ag->vm = vm;
	ag->next_tag = 1;
	ag->next_field_id = 1;
	classes_init(&ag->classes);
	places_init(&ag->places);
	if ((*vm)->GetEnv(vm, (void **)&ag->jvmti, JVMTI_VERSION_1_2) !=
	    JNI_OK) {
		say("this JVM offers no JVMTI 1.2 environment");
		return JNI_ERR;
	}
	if (add_capabilities(ag->jvmti) < 0 || create_monitors(ag) < 0)
		return JNI_ERR;
	/* without them, the trace says no sites (sites_start says why) */
	if (ag->opt.sites)
		sites_start(ag);
	if (open_recorder(ag) < 0)
		return JNI_ERR;
	if (set_events(ag->jvmti, attached, ag->sites != NULL) < 0) {
		say("cannot enable the JVMTI events");
		return JNI_ERR;
	}
	/* the JVM leaves SIGUSR1 alone */
	if (ag->opt.dump_on == DUMP_ON_SIGNAL && catch_sigusr1() < 0) {
		say("cannot catch SIGUSR1 for dump-on=signal");
		return JNI_ERR;
	}
	if (attached && start_threads(ag) < 0)
		return JNI_ERR;
	return JNI_OK;
}

jint agent_start(JavaVM *vm, const char *options, bool attached)
{
	struct agent *ag = &the_agent;
	char err[512];
	jint rc;

	say_as("java", tell_heaptrace);
	if (ag->jvmti)
		return loaded_again(ag, options, attached);
	atomic_store(&ag->control, -1);
	if (rec_parse_agent_options(options, &ag->opt, err, sizeof(err)) < 0) {
		say("%s", err);
		return JNI_ERR;
	}
	ag->attached = attached;
	no_sites_when_attached(&ag->opt, attached);
	/* first, so that heaptrace hears of what goes wrong next */
	if (attached && ag->opt.control && control_connect(ag) < 0)
		return JNI_ERR;
	rc = start_recording(ag, vm, attached);
	if (rc != JNI_OK)
		control_close(ag);
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return agent_start(vm, options, false);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options,
				      void *reserved)
{
	(void)reserved;
	return agent_start(vm, options, true);
}

/* After VM death, or instead of it when the VM never got going: the
 * recorder is closed if VM death did not close it. */
JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	struct agent *ag = &the_agent;

	(void)vm;
	if (ag->rec && !ag->closed) {
		ag->closed = true;
		ht_recorder_close(ag->rec, NULL);
	}
	dump_free(ag->dump);
	ag->dump = NULL;
	classes_free(&ag->classes);
	places_free(&ag->places);
	sites_free(ag);
	rec_free_options(&ag->opt);
}
