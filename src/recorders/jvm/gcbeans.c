/*
 * gcbeans.c - telling major GCs from minor ones. JVMTI's GC events do not
 * say what a GC collected, so the agent thread asks the
 * GarbageCollectorMXBeans (java.lang.management) after each GC: a major
 * GC has run when the collection count of a collector of the old
 * generation (or of the whole heap) went up.
 *
 * Collectors are told apart by name, as the JVM names them: the young
 * ones ("Copy", "PS Scavenge", "ParNew", "G1 Young Generation") and those
 * that count pauses rather than collections ("ZGC Pauses", "Shenandoah
 * Pauses") are not major; every other one is ("MarkSweepCompact",
 * "PS MarkSweep", "G1 Old Generation", "ZGC Cycles", ...).
 *
 * The beans are looked up on the first call, from the agent thread, so a
 * program recorded with other modes never loads java.management.
 */
#include "recorders/jvm/agent.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

static struct {
	bool tried;
	jint n;
	jobject *beans;      /* global references, the major collectors only */
	jmethodID get_count; /* GarbageCollectorMXBean.getCollectionCount */
} gc;

static bool is_minor(const char *name)
{
	static const char *const young[] = {
		"Copy", "PS Scavenge", "ParNew",
	};

	for (size_t i = 0; i < ARRAY_SIZE(young); i++)
		if (strcmp(name, young[i]) == 0)
			return true;
	return strstr(name, "Young") || strstr(name, "Minor") ||
	       strstr(name, "Pauses");
}

static bool failed(JNIEnv *jni)
{
	if (!(*jni)->ExceptionCheck(jni))
		return false;
	(*jni)->ExceptionClear(jni);
	return true;
}

/* Keeps bean if its collector is a major one; -1 on a JNI failure. */
static int keep_if_major(JNIEnv *jni, jobject bean, jmethodID get_name)
{
	jstring name = (*jni)->CallObjectMethod(jni, bean, get_name);
	const char *text;
	bool major;

	if (failed(jni) || !name)
		return -1;
	text = (*jni)->GetStringUTFChars(jni, name, NULL);
	if (!text)
		return -1;
	major = !is_minor(text);
	(*jni)->ReleaseStringUTFChars(jni, name, text);
	if (major) {
		gc.beans[gc.n] = (*jni)->NewGlobalRef(jni, bean);
		if (!gc.beans[gc.n])
			return -1;
		gc.n++;
	}
	return 0;
}

static int load(JNIEnv *jni)
{
	jclass factory, list_class, bean_class, manager_class;
	jmethodID get_beans, size, get, get_name;
	jobject list;
	jint n;

	factory = (*jni)->FindClass(jni,
				    "java/lang/management/ManagementFactory");
	list_class = (*jni)->FindClass(jni, "java/util/List");
	bean_class = (*jni)->FindClass(
		jni, "java/lang/management/GarbageCollectorMXBean");
	manager_class = (*jni)->FindClass(
		jni, "java/lang/management/MemoryManagerMXBean");
	if (failed(jni) || !factory || !list_class || !bean_class ||
	    !manager_class)
		return -1;
	get_beans = (*jni)->GetStaticMethodID(jni, factory,
					      "getGarbageCollectorMXBeans",
					      "()Ljava/util/List;");
	size = (*jni)->GetMethodID(jni, list_class, "size", "()I");
	get = (*jni)->GetMethodID(jni, list_class, "get",
				  "(I)Ljava/lang/Object;");
	get_name = (*jni)->GetMethodID(jni, manager_class, "getName",
				       "()Ljava/lang/String;");
	gc.get_count = (*jni)->GetMethodID(jni, bean_class,
					   "getCollectionCount", "()J");
	if (failed(jni) || !get_beans || !size || !get || !get_name ||
	    !gc.get_count)
		return -1;
	list = (*jni)->CallStaticObjectMethod(jni, factory, get_beans);
	if (failed(jni) || !list)
		return -1;
	n = (*jni)->CallIntMethod(jni, list, size);
	if (failed(jni) || n < 0)
		return -1;
	gc.beans = calloc((size_t)n + 1, sizeof(*gc.beans));
	if (!gc.beans)
		return -1;
	for (jint i = 0; i < n; i++) {
		jobject bean = (*jni)->CallObjectMethod(jni, list, get, i);

		if (failed(jni) || !bean ||
		    keep_if_major(jni, bean, get_name) < 0)
			return -1;
		(*jni)->DeleteLocalRef(jni, bean);
	}
	return 0;
}

long long gcbeans_major_count(JNIEnv *jni)
{
	long long total = 0;

	if (!gc.tried) {
		gc.tried = true;
		if ((*jni)->PushLocalFrame(jni, 32) != 0)
			return -1;
		if (load(jni) < 0) {
			gcbeans_release(jni);
			gc.tried = true;
		}
		(*jni)->PopLocalFrame(jni, NULL);
	}
	if (!gc.beans)
		return -1;
	for (jint i = 0; i < gc.n; i++) {
		jlong c = (*jni)->CallLongMethod(jni, gc.beans[i],
						 gc.get_count);

		if (failed(jni))
			return -1;
		if (c > 0)
			total += c;
	}
	return total;
}

void gcbeans_release(JNIEnv *jni)
{
	for (jint i = 0; i < gc.n; i++)
		(*jni)->DeleteGlobalRef(jni, gc.beans[i]);
	free(gc.beans);
	memset(&gc, 0, sizeof(gc));
}
