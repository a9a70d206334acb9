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

/* "KnownHeap.main(KnownHeap.java:12)", "(File.java)" without a line,
 * "(native)", no place without a source file; malloc'ed, NULL if the
 * method is gone or memory is short. */
static char *place_text(jvmtiEnv *jv, jmethodID m, bool native, jint line)
{
	char *name = NULL, *sig = NULL, *cls = NULL, *text = NULL;
	char *method = NULL, *file = NULL;
	jclass k = NULL;
	size_t len;

	if ((*jv)->GetMethodName(jv, m, &name, NULL, NULL) !=
		    JVMTI_ERROR_NONE ||
	    (*jv)->GetMethodDeclaringClass(jv, m, &k) != JVMTI_ERROR_NONE ||
	    (*jv)->GetClassSignature(jv, k, &sig, NULL) != JVMTI_ERROR_NONE)
		goto out;
	cls = java_type_name(sig);
	method = java_utf8(name);
	if (!native)
		file = source_file(jv, k);
	if (!cls || !method)
		goto out;
	len = strlen(cls) + strlen(method) + (file ? strlen(file) : 0) + 32;
	text = malloc(len);
	if (!text)
		goto out;
	if (native)
		snprintf(text, len, "%s.%s(native)", cls, method);
	else if (file && line > 0)
		snprintf(text, len, "%s.%s(%s:%d)", cls, method, file,
			 (int)line);
	else if (file)
		snprintf(text, len, "%s.%s(%s)", cls, method, file);
	else
		snprintf(text, len, "%s.%s", cls, method);
out:
	free(file);
	free(method);
	free(cls);
	(*jv)->Deallocate(jv, (unsigned char *)name);
	(*jv)->Deallocate(jv, (unsigned char *)sig);
	return text;
}

static uint64_t place_key(jmethodID m, jint line)
{
	uint64_t key = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ULL ^
		       (uint64_t)(uint32_t)line * 0xc2b2ae3d27d4eb4fULL;

	return key | 1;
}

ht_id frames_place(struct agent *ag, jmethodID m, jlocation location,
		   bool *native)
{
	struct place_table *t = &ag->places;
	jvmtiEnv *jv = ag->jvmti;
	jboolean is_native = JNI_FALSE;
	jint line;
	uint64_t key;
	uint32_t at;
	char *text;

	if ((*jv)->IsMethodNative(jv, m, &is_native) != JVMTI_ERROR_NONE)
		is_native = JNI_FALSE;
	*native = is_native;
	line = is_native ? LINE_UNKNOWN : line_of(jv, m, location);
	/* a key another place holds moves on to the next */
	for (key = place_key(m, line); idmap_get(&t->by_key, key, &at);
	     key += 2) {
		if (t->v[at].method == m && t->v[at].line == line)
			return (ht_id)at + 1;
	}
	if (ALLOC_GROW(t->v, t->n + 1, t->cap) < 0 ||
	    idmap_add(&t->by_key, key, (uint32_t)t->n) < 0)
		return 0;
	t->v[t->n] = (struct frame_place){.method = m, .line = line};
	text = place_text(jv, m, is_native, line);
	if (text)
		ht_method(ag->rec, (ht_id)t->n + 1, text);
	free(text);
	return (ht_id)++t->n;
}
