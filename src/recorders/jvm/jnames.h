/*
 * jnames.h - Java's names for types, from JNI type signatures: what the
 * agent calls classes in the trace.
 */
#ifndef JVM_JNAMES_H
#define JVM_JNAMES_H

/* "java.lang.String", "int[]", "KnownHeap$Node[][]" from a JNI type
 * signature ("Ljava/lang/String;", "[I", "[[LKnownHeap$Node;");
 * malloc'ed, NULL when out of memory. */
char *java_type_name(const char *signature);

#endif
