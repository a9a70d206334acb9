/*
 * sites.c - allocation sites on the JVM (heaptrace record --sites): the
 * allocations JVMTI samples (SampledObjectAlloc, JEP 331), each recorded
 * as an object_allocated with the stack that made it.
 *
 * HotSpot picks the objects: each thread counts down a distance in bytes
 * drawn from an exponential distribution of mean the interval
 * (SetHeapSamplingInterval), and the object that reaches zero is sampled;
 * the next distance is drawn afresh. By the exponential's memorylessness an
 * object of s bytes is then sampled with probability 1 - exp(-s/I),
 * independently of the others: the Poisson byte process the format's
 * "sites" promises (heaptrace-record(1) says where HotSpot's draw is an
 * approximation). Interval 0 samples every allocation: sites=all.
 *
 * The callback runs on the allocating thread, on many threads at once,
 * outside any GC: it may call JNI and JVMTI, allocate and lock. It takes
 * its own stack (the innermost SITES_MAX_FRAMES frames), then, under
 * sites_lock, interns it and tags the object. A stack is looked up first
 * by its frames as JVMTI gives them (method and bytecode index), without a
 * call into the JVM; only a stack not seen so far is named: each frame as
 * a place (frames.c: method and line), and the stack by its places, so
 * that two stacks that differ only in the bytecode index on a line are
 * one site. A new stack's method and stack events are handed to the
 * writer before sites_lock is let go, so that no other thread's
 * allocation that names it can reach the trace before them.
 *
 * The object's id is the tag the agent's dumps give it (agent.h), handed
 * out here: a later dump reports it under the same id, and the object
 * keeps it for life. A dump's walk holds sites_lock, so that the walk's
 * tags stay in one run (dump.c) and no sample tags an object the walk is
 * meeting. An object the walk met first (it tagged it: the dump before
 * this sample has it) is left out, since its allocation would come after
 * a dump that holds it; it is counted, and said with verbose.
 *
 * A thread draws its first distance when it starts, and draws again only
 * when it samples. The main thread starts before the agent can set the
 * interval, so its first distance is drawn at JVMTI's default (seen: the
 * first 19 arrays of 3,016 bytes a program made were not sampled with
 * sites=all). At VM init, on that thread, the agent therefore allocates
 * garbage until a sample comes (sites_prime), which it does not record:
 * from then on the main thread draws at the asked interval. At the
 * default interval there is nothing to correct.
 *
 * The sampled object's class is its class object's tag, learnt (tagged
 * and declared, classes.c) under dump_lock when no dump has met it yet;
 * like every class name, it is declared before the end of the next dump.
 */
#include "recorders/jvm/agent.h"
#include "util/alloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The innermost frames kept of a stack (the format's stacks hold up to
 * HT_STACK_MAX_FRAMES; the allocating code is in the innermost ones). */
#define SITES_MAX_FRAMES 64

/* A stack as JVMTI gives it: frames from first in raw_frames. */
struct raw_stack {
	size_t first;
	uint32_t count;
	ht_id stack;
};

/* A stack of the trace: places from first in places; its id is its
 * index + 1. */
struct site_stack {
	size_t first;
	uint32_t count;
};

/* The sampler's state, under sites_lock. This struct is not an API; it
 * may change from one release to the next. */
struct sites {
	jint interval;          /* bytes; 0: every allocation */
	char metadata[24];      /* "all" or the interval */
	bool over;              /* sites_stop: no more samples */
	jvmtiFrameInfo *raw_frames;
	size_t n_raw_frames, cap_raw_frames;
	struct raw_stack *raw;
	size_t n_raw, cap_raw;
	struct idmap raw_by_key;   /* a hash of the frames -> index in raw */
	ht_id *places;
	size_t n_places, cap_places;
	struct site_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct idmap stack_by_key; /* a hash of the places -> index */
	uint64_t samples;       /* recorded */
	uint64_t met_first;     /* left out: a dump's walk tagged it first */
	uint64_t failed;        /* left out: out of memory, a JVMTI error */
};

/* JVMTI calls the callback without a context: there is one agent. */
static struct agent *sampling_agent;

/* JVMTI's default interval, which the main thread's first draw used. */
#define DEFAULT_INTERVAL (512 * 1024)

/* sites_prime's garbage: arrays of PRIME_CHUNK bytes, up to PRIME_MAX in
 * all (a draw at the default interval is at most about 9 MB). */
#define PRIME_CHUNK (64 * 1024)
#define PRIME_MAX (16 * 1024 * 1024)

/* Set while this thread primes its sampler, and once a sample came.
 * Initial-exec, as the shim's own: the callback path mallocs nothing for
 * it. */
static __thread bool priming __attribute__((tls_model("initial-exec")));
static __thread bool primed __attribute__((tls_model("initial-exec")));

/* ---- the two tables of stacks -------------------------------------------- */

/* Keys of both tables: a hash, odd; a key another stack holds moves on
 * to the next odd one, as frames.c's places do. */
static uint64_t raw_key(const jvmtiFrameInfo *f, jint n)
{
	uint64_t h = (uint64_t)n;

	for (jint i = 0; i < n; i++) {
		h = idhash(h, (uint64_t)(uintptr_t)f[i].method);
		h = idhash(h, (uint64_t)f[i].location);
	}
	return h | 1;
}

static uint64_t places_key(const ht_id *p, uint32_t n)
{
	uint64_t h = (uint64_t)n ^ 0x9e3779b97f4a7c15ULL;

	for (uint32_t i = 0; i < n; i++)
		h = idhash(h, p[i]);
	return h | 1;
}

static bool raw_equal(const struct sites *s, const struct raw_stack *r,
		      const jvmtiFrameInfo *f, jint n)
{
	const jvmtiFrameInfo *g;

	/* an empty stack (no Java frame) may come before any frame is
	 * kept: raw_frames is then NULL */
	if (r->count != (uint32_t)n || n == 0)
		return r->count == (uint32_t)n;
	g = s->raw_frames + r->first;
	for (jint i = 0; i < n; i++)
		if (g[i].method != f[i].method ||
		    g[i].location != f[i].location)
			return false;
	return true;
}

/* The id of the stack of places p[0..n), declared now if new (*declared
 * set); 0 when out of memory. */
static ht_id stack_of_places(struct agent *ag, struct sites *s,
			     const ht_id *p, uint32_t n, bool *declared)
{
	uint64_t key;
	uint32_t at;

	for (key = places_key(p, n); idmap_get(&s->stack_by_key, key, &at);
	     key += 2) {
		const struct site_stack *st = &s->stacks[at];

		if (st->count == n &&
		    (n == 0 ||
		     !memcmp(s->places + st->first, p, n * sizeof(*p))))
			return (ht_id)at + 1;
	}
	if (s->n_stacks >= UINT32_MAX - 1 ||
	    ALLOC_GROW(s->stacks, s->n_stacks + 1, s->cap_stacks) < 0 ||
	    ALLOC_GROW(s->places, s->n_places + n, s->cap_places) < 0 ||
	    idmap_add(&s->stack_by_key, key, (uint32_t)s->n_stacks) < 0)
		return 0;
	if (n)
		memcpy(s->places + s->n_places, p, n * sizeof(*p));
	s->stacks[s->n_stacks] = (struct site_stack){
		.first = s->n_places, .count = n,
	};
	s->n_places += n;
	ht_stack(ag->rec, (ht_id)s->n_stacks + 1, n, p);
	*declared = true;
	return (ht_id)++s->n_stacks;
}

/* The stack id of the frames f[0..n), innermost first; 0 when out of
 * memory. Under sites_lock. */
static ht_id intern(struct agent *ag, struct sites *s,
		    const jvmtiFrameInfo *f, jint n, bool *declared)
{
	ht_id places[SITES_MAX_FRAMES], stack;
	uint64_t key;
	uint32_t at;

	for (key = raw_key(f, n); idmap_get(&s->raw_by_key, key, &at);
	     key += 2)
		if (raw_equal(s, &s->raw[at], f, n))
			return s->raw[at].stack;
	for (jint i = 0; i < n; i++) {
		places[i] = frames_site_place(ag, f[i].method, f[i].location);
		if (!places[i])
			return 0;
	}
	stack = stack_of_places(ag, s, places, (uint32_t)n, declared);
	if (!stack ||
	    ALLOC_GROW(s->raw, s->n_raw + 1, s->cap_raw) < 0 ||
	    ALLOC_GROW(s->raw_frames, s->n_raw_frames + (size_t)n,
		       s->cap_raw_frames) < 0 ||
	    idmap_add(&s->raw_by_key, key, (uint32_t)s->n_raw) < 0)
		return stack; /* not remembered: named again next time */
	if (n)
		memcpy(s->raw_frames + s->n_raw_frames, f,
		       (size_t)n * sizeof(*f));
	s->raw[s->n_raw++] = (struct raw_stack){
		.first = s->n_raw_frames, .count = (uint32_t)n, .stack = stack,
	};
	s->n_raw_frames += (size_t)n;
	return stack;
}

/* ---- the callback ---------------------------------------------------------- */

/* The tag of a class no dump has met yet, learnt now; 0 when it cannot
 * be, or when the last dump is taken. */
static jlong learn_class(struct agent *ag, JNIEnv *jni, jclass k)
{
	jvmtiEnv *jv = ag->jvmti;
	jlong tag = 0;

	(*jv)->RawMonitorEnter(jv, ag->dump_lock);
	if (!ag->dumps_over) {
		/* the links are the trace's first fields (classes.c) */
		classes_declare_links(ag);
		tag = classes_learn(ag, jni, k);
	}
	(*jv)->RawMonitorExit(jv, ag->dump_lock);
	return tag;
}

void JNICALL sites_on_sample(jvmtiEnv *jv, JNIEnv *jni, jthread thread,
			     jobject object, jclass klass, jlong size)
{
	struct agent *ag = sampling_agent;
	jvmtiFrameInfo frames[SITES_MAX_FRAMES];
	jlong class_tag = 0, tag = 0;
	jint count = 0;
	bool declared = false;
	struct sites *s;
	ht_id stack;

	(void)thread;
	if (priming) {
		primed = true; /* the agent's own garbage */
		return;
	}
	if (!ag || !ag->sites)
		return;
	/* outside the lock, what needs it not: the class, the frames */
	if ((*jv)->GetTag(jv, klass, &class_tag) != JVMTI_ERROR_NONE)
		class_tag = 0;
	if (class_tag == 0)
		class_tag = learn_class(ag, jni, klass);
	if ((*jv)->GetStackTrace(jv, NULL, 0, SITES_MAX_FRAMES, frames,
				 &count) != JVMTI_ERROR_NONE)
		count = 0;
	(*jv)->RawMonitorEnter(jv, ag->sites_lock);
	s = ag->sites;
	if (s->over)
		goto out;
	if ((*jv)->GetTag(jv, object, &tag) != JVMTI_ERROR_NONE ||
	    class_tag == 0) {
		s->failed++;
		goto out;
	}
	if (tag != 0) {
		s->met_first++;
		goto out;
	}
	stack = intern(ag, s, frames, count, &declared);
	tag = agent_new_tag(ag);
	if (!stack || (*jv)->SetTag(jv, object, tag) != JVMTI_ERROR_NONE) {
		s->failed++;
		goto out;
	}
	ht_object_allocated_by(ag->rec, (ht_id)tag, (ht_id)class_tag,
			       (uint64_t)size, stack);
	s->samples++;
out:
	/* what this thread declared goes first, before any use of it by
	 * another */
	if (declared)
		ht_recorder_hand_off(ag->rec);
	(*jv)->RawMonitorExit(jv, ag->sites_lock);
}

/* ---- starting and stopping ------------------------------------------------ */

/* The interval JVMTI takes (a jint) for the option's. */
static jint interval_of(uint64_t option)
{
	if (option == REC_SITES_DEFAULT)
		return DEFAULT_INTERVAL;
	if (option > INT_MAX) {
		say("sites=%llu: the JVM samples at most every %d bytes; "
		    "sampling every %d", (unsigned long long)option, INT_MAX,
		    INT_MAX);
		return INT_MAX;
	}
	return (jint)option;
}

int sites_start(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;
	jvmtiCapabilities caps;
	struct sites *s;

	memset(&caps, 0, sizeof(caps));
	caps.can_generate_sampled_object_alloc_events = 1;
	if ((*jv)->AddCapabilities(jv, &caps) != JVMTI_ERROR_NONE) {
		say("this JVM does not sample allocations (JVMTI "
		    "SampledObjectAlloc, Java 11 and later): no allocation "
		    "sites recorded");
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s ||
	    (*jv)->CreateRawMonitor(jv, "heaptrace sites", &ag->sites_lock) !=
		    JVMTI_ERROR_NONE) {
		free(s);
		say("out of memory: no allocation sites recorded");
		return -1;
	}
	s->interval = interval_of(ag->opt.sites_interval);
	if (s->interval == 0)
		snprintf(s->metadata, sizeof(s->metadata), "all");
	else
		snprintf(s->metadata, sizeof(s->metadata), "%d",
			 (int)s->interval);
	idmap_init(&s->raw_by_key);
	idmap_init(&s->stack_by_key);
	if ((*jv)->SetHeapSamplingInterval(jv, s->interval) !=
	    JVMTI_ERROR_NONE) {
		say("the JVM refuses the sampling interval %d: no allocation "
		    "sites recorded", (int)s->interval);
		idmap_free(&s->raw_by_key);
		idmap_free(&s->stack_by_key);
		free(s);
		return -1;
	}
	sampling_agent = ag;
	ag->sites = s;
	return 0;
}

void sites_prime(struct agent *ag, JNIEnv *jni)
{
	if (!ag->sites || ag->sites->interval == DEFAULT_INTERVAL)
		return;
	priming = true;
	primed = false;
	for (size_t n = 0; !primed && n < PRIME_MAX; n += PRIME_CHUNK) {
		jbyteArray garbage = (*jni)->NewByteArray(jni, PRIME_CHUNK);

		if (!garbage) {
			(*jni)->ExceptionClear(jni);
			break;
		}
		(*jni)->DeleteLocalRef(jni, garbage);
	}
	priming = false;
	if (!primed)
		say("the main thread's first allocations may be sampled at "
		    "JVMTI's default interval, not %d bytes",
		    (int)ag->sites->interval);
}

const char *sites_metadata(const struct agent *ag)
{
	return ag->sites ? ag->sites->metadata : NULL;
}

void sites_hold(struct agent *ag)
{
	if (ag->sites)
		(*ag->jvmti)->RawMonitorEnter(ag->jvmti, ag->sites_lock);
}

void sites_release(struct agent *ag)
{
	if (ag->sites)
		(*ag->jvmti)->RawMonitorExit(ag->jvmti, ag->sites_lock);
}

void sites_stop(struct agent *ag)
{
	jvmtiEnv *jv = ag->jvmti;
	struct sites *s = ag->sites;

	if (!s)
		return;
	(*jv)->SetEventNotificationMode(jv, JVMTI_DISABLE,
					JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	/* a sample in flight ends before the trace does */
	(*jv)->RawMonitorEnter(jv, ag->sites_lock);
	if (!s->over && ag->opt.verbose)
		say("%llu allocations sampled, %zu stacks; %llu left out "
		    "(met by a dump first: %llu)",
		    (unsigned long long)s->samples, s->n_stacks,
		    (unsigned long long)(s->met_first + s->failed),
		    (unsigned long long)s->met_first);
	s->over = true;
	(*jv)->RawMonitorExit(jv, ag->sites_lock);
}

void sites_free(struct agent *ag)
{
	struct sites *s = ag->sites;

	if (!s)
		return;
	ag->sites = NULL;
	free(s->raw_frames);
	free(s->raw);
	free(s->places);
	free(s->stacks);
	idmap_free(&s->raw_by_key);
	idmap_free(&s->stack_by_key);
	free(s);
}
