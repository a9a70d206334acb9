/*
 * frames.c - where a Java frame is, named as a Java stack trace and the
 * HPROF reader name it: "KnownHeap.main(KnownHeap.java:105)",
 * "java.lang.Object.wait(native)", "App.run(App.java)" when the class has
 * no line table, "App.run" when it has no source file.
 *
 * A frame's method id in the trace is its place (method and line), not
 * the jmethodID: the names of one method at two lines differ, as the
 * HPROF reader's do, so that the same program read from a heap dump and
 * from this recorder prints the same frames. Places are numbered from 1
 * per trace in the order first seen, and each is named once by a method
 * event. Looking up lines needs can_get_line_numbers and
 * can_get_source_file_name; without them frames are named as before,
 * by class and method alone.
 *
 * An allocation site's frame (sites.c) is a place too, in the same table
 * and the same numbering, but named as the format's stacks want it: the
 * method alone ("KnownHeap.main"), its file and line in their own fields
 * (ht_method_at). A dump's frame and a site's frame at one line are two
 * places, since a method id has one name. The dump thread and the
 * threads that allocate look places up at once: the table is under
 * places_lock, which is taken last (after dump_lock or sites_lock).
 */
#include "recorders/jvm/agent.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_UNKNOWN (-1)

void places_init(struct place_table *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->by_key);
}

void places_free(struct place_table *t)
{
	free(t->v);
	idmap_free(&t->by_key);
	memset(t, 0, sizeof(*t));
}

/* The line of location in m: the line table entry that starts last at
 * or before it, as the JVM's own line_number_from_bci picks it. */
static jint line_of(jvmtiEnv *jv, jmethodID m, jlocation location)
{
	jvmtiLineNumberEntry *table = NULL;
	jint n = 0, line = LINE_UNKNOWN;
	jlocation best = -1;

	if (location < 0 ||
	    (*jv)->GetLineNumberTable(jv, m, &n, &table) != JVMTI_ERROR_NONE)
		return LINE_UNKNOWN;
	for (jint i = 0; i < n; i++) {
		if (table[i].start_location <= location &&
		    table[i].start_location > best) {
			best = table[i].start_location;
			line = table[i].line_number;
		}
	}
	(*jv)->Deallocate(jv, (unsigned char *)table);
	return line;
}

/* The class's source file, as UTF-8; NULL when the class file names
 * none (or is gone). malloc'ed. */
static char *source_file(jvmtiEnv *jv, jclass k)
{
	char *jfile = NULL, *file = NULL;

	if ((*jv)->GetSourceFileName(jv, k, &jfile) == JVMTI_ERROR_NONE &&
	    jfile && *jfile)
		file = java_utf8(jfile);
	(*jv)->Deallocate(jv, (unsigned char *)jfile);
	return file;
}

/* "KnownHeap.main" in *method and, unless native, the class's source
 * file in *file (NULL when it names none); both malloc'ed. -1 (nothing
 * set) if the method is gone or memory is short. */
static int method_of(jvmtiEnv *jv, jmethodID m, bool native, char **method,
		     char **file)
{
	char *name = NULL, *sig = NULL, *cls = NULL, *own = NULL;
	jclass k = NULL;
	size_t len;

	*method = *file = NULL;
	if ((*jv)->GetMethodName(jv, m, &name, NULL, NULL) !=
		    JVMTI_ERROR_NONE ||
	    (*jv)->GetMethodDeclaringClass(jv, m, &k) != JVMTI_ERROR_NONE ||
	    (*jv)->GetClassSignature(jv, k, &sig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	cls = java_type_name(sig);
	own = java_utf8(name);
	if (!cls || !own)
		goto out;
	len = strlen(cls) + strlen(own) + 2;
	*method = malloc(len);
	if (!*method)
		goto out;
	snprintf(*method, len, "%s.%s", cls, own);
	if (!native)
		*file = source_file(jv, k);
out:
	free(own);
	free(cls);
	(*jv)->Deallocate(jv, (unsigned char *)name);
	(*jv)->Deallocate(jv, (unsigned char *)sig);
	return *method ? 0 : -1;
}

/* "KnownHeap.main(KnownHeap.java:12)", "(File.java)" without a line,
 * "(native)", no place without a source file; malloc'ed, NULL if the
 * method is gone or memory is short. */
static char *place_text(const char *method, const char *file, bool native,
			jint line)
{
	size_t len = strlen(method) + (file ? strlen(file) : 0) + 32;
	char *text = malloc(len);

	if (!text)
		return NULL;
	if (native)
		snprintf(text, len, "%s(native)", method);
	else if (file && line > 0)
		snprintf(text, len, "%s(%s:%d)", method, file, (int)line);
	else if (file)
		snprintf(text, len, "%s(%s)", method, file);
	else
		snprintf(text, len, "%s", method);
	return text;
}

/* Names the place id: a dump's frame by place_text, a site's by the
 * method with its file and line apart. */
static void declare_place(struct agent *ag, ht_id id, jmethodID m,
			  bool native, jint line, bool site)
{
	char *method, *file, *text;

	if (method_of(ag->jvmti, m, native, &method, &file) < 0)
		return;
	if (site) {
		ht_method_at(ag->rec, id, method, file,
			     line > 0 ? (uint32_t)line : 0);
	} else {
		text = place_text(method, file, native, line);
		if (text)
			ht_method(ag->rec, id, text);
		free(text);
	}
	free(file);
	free(method);
}

static uint64_t place_key(jmethodID m, jint line, bool site)
{
	uint64_t key = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ULL ^
		       (uint64_t)(uint32_t)line * 0xc2b2ae3d27d4eb4fULL ^
		       (site ? 0x165667b19e3779f9ULL : 0);

	return key | 1;
}

/* The place's id, found or named now; 0 when out of memory. Under
 * places_lock. */
static ht_id place_id(struct agent *ag, jmethodID m, jint line, bool native,
		      bool site)
{
	struct place_table *t = &ag->places;
	uint64_t key;
	uint32_t at;

	/* a key another place holds moves on to the next */
	for (key = place_key(m, line, site); idmap_get(&t->by_key, key, &at);
	     key += 2) {
		if (t->v[at].method == m && t->v[at].line == line &&
		    t->v[at].site == site)
			return (ht_id)at + 1;
	}
	if (ALLOC_GROW(t->v, t->n + 1, t->cap) < 0 ||
	    idmap_add(&t->by_key, key, (uint32_t)t->n) < 0)
		return 0;
	t->v[t->n] = (struct frame_place){
		.method = m, .line = line, .site = site,
	};
	declare_place(ag, (ht_id)t->n + 1, m, native, line, site);
	return (ht_id)++t->n;
}

static ht_id place_of(struct agent *ag, jmethodID m, jlocation location,
		      bool *native, bool site)
{
	jvmtiEnv *jv = ag->jvmti;
	jboolean is_native = JNI_FALSE;
	jint line;
	ht_id id;

	if ((*jv)->IsMethodNative(jv, m, &is_native) != JVMTI_ERROR_NONE)
		is_native = JNI_FALSE;
	*native = is_native;
	line = is_native ? LINE_UNKNOWN : line_of(jv, m, location);
	(*jv)->RawMonitorEnter(jv, ag->places_lock);
	id = place_id(ag, m, line, is_native, site);
	(*jv)->RawMonitorExit(jv, ag->places_lock);
	return id;
}

ht_id frames_place(struct agent *ag, jmethodID m, jlocation location,
		   bool *native)
{
	return place_of(ag, m, location, native, false);
}

ht_id frames_site_place(struct agent *ag, jmethodID m, jlocation location)
{
	bool native;

	return place_of(ag, m, location, &native, true);
}
