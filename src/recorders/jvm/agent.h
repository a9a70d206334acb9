/*
 * agent.h - the parts of the JVMTI agent (libheaptrace-jvmti.so) and the
 * state they share.
 *
 * agent.c     loading, options, the JVMTI events, the agent thread that
 *             takes the dumps, VM death;
 * attach.c    loading into a running JVM (Agent_OnAttach) and the
 *             control socket to heaptrace record --pid;
 * classes.c   the loaded classes: tags, Java names, their reference
 *             fields (field ids), and where the references of their
 *             instances go (field slots);
 * dump.c      one heap dump: the walk (FollowReferences) and the events
 *             it becomes, in the Microsoft VM's container model;
 * frames.c    where a frame is: its method and line, as a method event;
 * gcbeans.c   telling major GCs from minor ones;
 * sites.c     allocation sites: JVMTI's sampled allocations, each with
 *             its stack, as object_allocated events;
 * jnames.c    Java's names for types.
 * What every recorder shares (the option string, opening and closing the
 * trace, messages) is in recorders/core. The tables map ids to indexes
 * with util/idmap.h.
 *
 * Object ids are JVMTI tags that the agent hands out: an object keeps its
 * id for its whole life, across GCs and dumps. Class ids are the tags of
 * the class objects, thread ids the tags of the Thread objects.
 *
 * Tags are handed out while a dump is taken, and dumps are taken one
 * at a time, under dump_lock (by the agent thread after GCs, by the thread
 * that asks for one, at VM death), so the class table needs no other
 * lock. With sites, a sampled object gets its tag when it is allocated,
 * under sites_lock, which the dump holds through its walk: the walk's tags
 * are then handed out by it alone, one after the other, as dump.c counts
 * on. The counter itself is atomic, since classes (dump_lock) and sampled
 * objects (sites_lock) get tags at once.
 */
#ifndef JVM_AGENT_H
#define JVM_AGENT_H

#include "util/idmap.h"
#include "recorders/jvm/jnames.h"
#include "recorders/core/options.h"
#include "recorders/core/say.h"

#include <heaptrace/record.h>

#include <jni.h>
#include <jvmti.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum class_kind {
	CLASS_INSTANCE,        /* fields in slots, by the layout below */
	CLASS_OBJECT_ARRAY,    /* one slot per element */
	CLASS_PRIMITIVE_ARRAY, /* no references */
};

/*
 * A class the agent has tagged. The heap walk names a field by its JVMTI
 * field index (which counts every field: those of the implemented
 * interfaces first, then of the superclasses from java.lang.Object down,
 * static and primitive ones included); an object's references are
 * recorded in slots, one per instance reference field in that order, null
 * ones kept. slot_of maps a field index to its slot, slot_field a slot to
 * the trace's id of its field.
 *
 * The reference fields the class itself declares, static or not, get
 * field ids (a fields event) when it is laid out: own_fields holds them
 * in GetClassFields order, 0 for a primitive field unless the agent
 * records values (then its primitive fields get ids too, typed, after
 * its references). With values, value_of maps a field index to the id
 * of the primitive instance field the walk reports a value of. A static field's
 * reference is reported from the class that declares it, numbered in that
 * class's own count: own_first_index is the index of its first field
 * there (the fields of its interfaces and superclasses come before).
 * This struct is not an API; it may change from one release to the next.
 */
struct class_info {
	ht_id tag;
	enum class_kind kind;
	uint32_t first_index; /* field index of slot_of[0] */
	uint32_t n_fields;    /* entries in slot_of */
	int32_t *slot_of;     /* slot, or -1 for a static or primitive field */
	uint32_t n_slots;     /* instance reference fields */
	ht_id *slot_field;    /* n_slots field ids */
	ht_id *value_of;      /* with values: n_fields field ids, 0 for a
				 reference or static field; else NULL */
	ht_id *own_fields;    /* n_own field ids, NULL until declared */
	uint32_t n_own;
	uint32_t own_first_index;
	/* java.lang.ref's Soft, Weak, Final and PhantomReference and their
	 * subclasses: the strength of their referent (HT_FIELD_SOFT ..
	 * HT_FIELD_PHANTOM, 0 for other classes) and the synthetic field
	 * "referent" of that kind that the strength class declares, which
	 * their referent slot names instead of Reference.referent */
	uint8_t referent_kind;
	ht_id strength_field;
};

/* This struct and those below are not an API; they may change from one
 * release to the next. */
struct class_table {
	struct class_info *v;
	size_t n, cap;
	struct idmap by_tag;  /* tag -> index in v */
	ht_id class_class;    /* the tag of java.lang.Class, 0 until seen */
	ht_id reference_class; /* java.lang.ref.Reference's tag, 0 until seen */
	ht_id referent_field; /* Reference.referent's field id, 0 until seen */
};

/* A frame's place: its method at a line (-1 unknown), named for a dump's
 * frame or (site) for an allocation site's stack (frames.c). */
struct frame_place {
	jmethodID method;
	jint line;
	bool site;
};

/* The places named in this trace; a place's method id is its index + 1. */
struct place_table {
	struct frame_place *v;
	size_t n, cap;
	struct idmap by_key;  /* a hash of method and line -> index in v */
};

struct dump; /* dump.c's scratch, kept between dumps */
struct sites; /* sites.c's tables */

/* The agent's state, one for the process. This struct is not an API; it
 * may change from one release to the next. */
struct agent {
	JavaVM *vm;
	jvmtiEnv *jvmti;
	struct rec_options opt;
	struct ht_recorder *rec;

	/* Serializes the group events: a GC's gc_started and gc_finished
	 * (recorded in the GC events, on the VM thread) against a dump's
	 * C_BEGIN ... C_END (recorded by the agent thread), so that no GC
	 * lands inside a dump. Whoever holds it calls nothing but the shim
	 * and RawMonitorExit: a GC may be waiting for it inside a pause. */
	jrawMonitorID record_lock;
	bool closed;          /* under record_lock: rec is gone */

	/* Wakes the agent thread; the fields below are under it. */
	jrawMonitorID wake_lock;
	uint64_t gcs_finished;
	uint64_t dump_requests;
	bool stop;            /* VM death or detach: the agent thread must
	                         leave */
	bool thread_running;  /* the agent thread has started, not left */

	/* Held while a dump is taken; the fields below are under it. */
	jrawMonitorID dump_lock;
	bool dumps_over;      /* VM death has taken the last one */
	_Atomic jlong next_tag; /* see the opening comment */
	struct class_table classes;
	/* under places_lock, taken after dump_lock or sites_lock: the
	 * dump's frames and the sites' stacks name their places at once */
	jrawMonitorID places_lock;
	struct place_table places;
	ht_id next_field_id;  /* the next field id to hand out, from 1 */
	struct dump *dump;
	uint64_t dumps_taken;

	/* With sites (sites.c), NULL without: the sampler's tables. Held
	 * by the thread that records a sample, and by a dump's walk. */
	struct sites *sites;
	jrawMonitorID sites_lock;

	/* Attached to a running JVM (Agent_OnAttach) rather than loaded
	 * with it. control is the socket to heaptrace record --pid, -1 when
	 * there is none: heaptrace writes a line "dump" to ask for a dump
	 * and closes its end to stop the recording; the agent closes it once
	 * the trace is closed, so that heaptrace knows when it may read it. */
	bool attached;
	atomic_int control;
	atomic_bool control_running; /* its thread has not left */
};

/* ---- agent.c, for attach.c ---- */

/* Loads the agent (Agent_OnLoad, Agent_OnAttach): JNI_OK or JNI_ERR; its
 * messages go to the JVM's standard error and, attached, to heaptrace
 * through the control socket. */
jint agent_start(JavaVM *vm, const char *options, bool attached);
/* Starts a JVMTI agent thread named name running fn(arg); 0 or -1. */
int agent_thread(struct agent *ag, JNIEnv *jni, const char *name,
		 jvmtiStartFunction fn, void *arg);
/* Takes a dump now, unless the last one was taken. */
void agent_take_dump(struct agent *ag, JNIEnv *jni, const char *why);
/* Takes the last dump (why: "at exit", "at detach") and closes the trace,
 * once, whoever comes first: VM death or the end of an attached
 * recording. */
void agent_finish(struct agent *ag, JNIEnv *jni, const char *why);

/* ---- attach.c ---- */

/* Connects to heaptrace's socket (ag->opt.control); 0 or -1 (a warning
 * says why). */
int control_connect(struct agent *ag);
/* Starts the thread that reads the socket; 0 or -1. */
int control_start(struct agent *ag, JNIEnv *jni);
/* Sends heaptrace a line "error MESSAGE" when attached. */
void control_report(struct agent *ag, const char *message);
/* Connects to the socket at path only to send heaptrace "error MESSAGE"
 * (the agent is in use already). */
void control_refuse(const char *path, const char *message);
/* Closes the socket: heaptrace then reads the trace. */
void control_close(struct agent *ag);

/* A new object id. */
static inline jlong agent_new_tag(struct agent *ag)
{
	return atomic_fetch_add(&ag->next_tag, 1);
}

/* ---- classes.c ---- */

/* Declares the links (trace.h: an object to its class, a class object to
 * its superclass, loader, signers and protection domain, numbered as the
 * HPROF reader numbers them) in a fields event, once per trace, before any
 * other field: while next_field_id is 1. */
void classes_declare_links(struct agent *ag);

void classes_init(struct class_table *t);
void classes_free(struct class_table *t);
/* Tags every loaded class not yet known, records its name (a class
 * event) and works out its layout. 0, or -1 when out of memory. */
int classes_sweep(struct agent *ag, JNIEnv *jni);
/* Makes sure the class k is known; its tag, or 0 on failure. */
jlong classes_learn(struct agent *ag, JNIEnv *jni, jclass k);
const struct class_info *classes_find(const struct class_table *t, ht_id tag);
/* The field id of the reference the walk reported from an instance of ci
 * (JVMTI_HEAP_REFERENCE_FIELD) or from the class ci itself
 * (JVMTI_HEAP_REFERENCE_STATIC_FIELD) with field index index; 0 when
 * unknown. */
ht_id classes_instance_field(const struct class_info *ci, jint index);
ht_id classes_static_field(const struct class_info *ci, jint index);
/* With values: the field id of the primitive value the walk reported
 * from an instance of ci (JVMTI_HEAP_REFERENCE_FIELD) with field index
 * index; 0 when unknown. A static's is classes_static_field's. */
ht_id classes_value_field(const struct class_info *ci, jint index);

/* ---- dump.c ---- */

/* Takes one heap dump and records it. why is for messages. 0, or -1 when
 * the dump could not be taken (a warning says why). */
int dump_heap(struct agent *ag, JNIEnv *jni, const char *why);
void dump_free(struct dump *d);

/* ---- frames.c ---- */

void places_init(struct place_table *t);
void places_free(struct place_table *t);
/* The method id of a frame of m at location (-1: unknown), named by a
 * method event the first time in the trace ("App.run(App.java:12)");
 * *native says whether m is native. 0 when out of memory. */
ht_id frames_place(struct agent *ag, jmethodID m, jlocation location,
		   bool *native);
/* The same for a frame of an allocation site's stack, named by the
 * method alone with its file and line apart (ht_method_at). */
ht_id frames_site_place(struct agent *ag, jmethodID m, jlocation location);

/* ---- sites.c ---- */

/* With sites: asks the JVM for sampled allocations at the option's
 * interval and makes the tables. 0, or -1 (a warning says why: the trace
 * then has no sites). Before the trace is opened, at load. */
int sites_start(struct agent *ag);
/* At VM init, on the main thread: restarts its sampler at the interval
 * (sites.c says why). */
void sites_prime(struct agent *ag, JNIEnv *jni);
/* The header's metadata "sites": "all" or the interval in bytes; NULL
 * without sites. */
const char *sites_metadata(const struct agent *ag);
/* The SampledObjectAlloc callback. */
void JNICALL sites_on_sample(jvmtiEnv *jv, JNIEnv *jni, jthread thread,
			     jobject object, jclass klass, jlong size);
/* Around a dump's walk: no sampled object gets a tag meanwhile. */
void sites_hold(struct agent *ag);
void sites_release(struct agent *ag);
/* No samples from now on: before the last dump, so that the trace closes
 * with no sample in flight. */
void sites_stop(struct agent *ag);
void sites_free(struct agent *ag);

/* ---- gcbeans.c ---- */

/* The number of major GCs the JVM has run so far, from the
 * GarbageCollectorMXBeans; -1 when it cannot tell. */
long long gcbeans_major_count(JNIEnv *jni);
void gcbeans_release(JNIEnv *jni);

#endif
