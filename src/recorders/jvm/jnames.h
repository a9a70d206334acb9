/*
 * jnames.h - Java's names for types, from JNI type signatures: what the
 * agent calls classes in the trace.
 */
#ifndef JVM_JNAMES_H
#define JVM_JNAMES_H

/* "java.lang.String", "int[]", "KnownHeap$Node[][]" from a JNI type
 * signature ("Ljava/lang/String;", "[I", "[[LKnownHeap$Node;"), in UTF-8;
 * malloc'ed, NULL when out of memory. */
char *java_type_name(const char *signature);

/* A name JVMTI gives (a field's, a method's), from the JVM's modified
 * UTF-8 into UTF-8, which the trace holds; malloc'ed, NULL when out of
 * memory. */
char *java_utf8(const char *jname);

/* The trace's HT_TYPE_* of a primitive type from its JNI signature letter
 * ('I' int, 'Z' boolean, ...), which is also JVMTI's jvmtiPrimitiveType;
 * 0 for any other letter (a reference, void). */
unsigned java_value_type(char letter);

#endif
