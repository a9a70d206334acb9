/*
 * dump.c - one heap dump: a walk of the heap from the roots
 * (FollowReferences), then the events it becomes, in the container model
 * of the Microsoft VM's heap dumps (heaptrace(5)):
 *
 *   C_BEGIN
 *   C_RT_THREAD thread      the Thread object, JNI locals outside frames
 *     C_RT_JIT frame method   a Java frame's locals (C_RT_NATIVE for a
 *                             native method's JNI locals)
 *   C_RT_STRONGPTR          JNI global references
 *   C_RT_CLASS class        a system class's own object
 *   C_RT_INTERNALVM         objects whose monitors are held
 *   C_RT_ROOTTABLE          other roots of the VM
 *   C_HEAP                  every object reached, with its references
 *   C_END
 *
 * The walk runs at a safepoint and its callbacks may call no JVMTI or JNI
 * function, so they only write down what they are told: every object with
 * its class tag and size, every reference by field or element index, every
 * root with its thread, frame and method. The events are made afterwards,
 * while the program runs again: the dump is the heap as it was during the
 * walk. The walk names only the frames whose locals hold objects; the
 * others come from each thread's stack as JVMTI gives it right after the
 * walk, for a thread whose stack still has the walk's frames where the
 * walk saw them (one that moved on keeps only the walk's frames). A
 * frame's method is its place, method and line (frames.c). Each reference
 * names the field it was read from (the ids of
 * classes.c's fields events): an instance field's by its slot, a static
 * field's (a reference of its class object) and a reference the layout did
 * not place by the field index, looked up once the walk is over; the links
 * (an object to its class, a class object to its superclass, loader...)
 * by their own ids, as the HPROF reader gives them, so that both give the
 * same graph of one program.
 *
 * With values (the option values), the walk also reports each primitive
 * field's value (an instance's, and a class object's statics) and each
 * primitive array's contents; the callbacks write them down beside the
 * objects, kept as the format keeps them (whole up to HT_VALUES_WHOLE_MAX
 * bytes, else a prefix and the hash of all), and each value is named by
 * its field once the walk is over, as the references are. The walk
 * reaches an object before it visits it, so its values come after it has
 * its record, in the order of visits: they are sorted into the objects'
 * order afterwards, outside the pause.
 */
#include "recorders/jvm/agent.h"
#include "util/alloc.h"

#include <heaptrace/record.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_CLASS UINT32_MAX

/* The structs below are dump.c's scratch, not an API; they may change
 * from one release to the next. */

/* One object of the dump. Its references are its link to its class
 * (class_ref, when the walk reported it), n_slots entries of d->slots from
 * first (fields or elements in order, 0 for null), then n_extra entries of
 * d->extras (references that are not fields: a class's loader,
 * superclass, constant pool entries...). */
struct object_rec {
	ht_id id;
	ht_id cls;
	ht_id class_ref;
	uint64_t size;
	size_t first;
	uint32_t n_slots;
	uint32_t n_extra;
	uint32_t class_index; /* in ag->classes.v, NO_CLASS if unknown */
};

struct extra_ref {
	uint32_t object;
	uint32_t seq;
	ht_id target;
	jint field_index;  /* JVMTI's, for a field; -1 for none */
	bool is_static;    /* a class object's static field */
	ht_id link;        /* the link it is (a class object's), 0 for none */
};

/* A primitive value the walk reported: of an instance's field, or of a
 * static (is_static) when the object is a class's own object. */
struct value_rec {
	uint32_t object;
	uint32_t seq;
	jint field_index;  /* JVMTI's */
	bool is_static;
	uint64_t bits;     /* as values carries it (trace.h) */
};

/* A primitive array's contents: stored elements' bytes at d->bytes + at. */
struct array_rec {
	uint32_t object;
	uint8_t type;
	uint64_t length;
	uint64_t stored;
	size_t at;
	uint64_t hash;     /* when stored < length */
};

/* The element bytes JVMTI hands over are the JVM's own, which the format
 * keeps little-endian: the hosts the agent runs on. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "primitive arrays are copied as the JVM holds them");

/* The containers roots go to, in the order they are recorded. */
enum root_group {
	G_THREAD,
	G_STRONG,
	G_CLASS,
	G_MONITOR,
	G_OTHER,
};

struct root_rec {
	uint8_t group;
	jint depth;        /* the frame; -1 for the thread itself */
	ht_id owner;       /* the thread (G_THREAD) or class (G_CLASS) tag */
	jmethodID method;  /* the frame's */
	ht_id target;
	uint32_t seq;      /* report order: ties keep it */
	jlocation location; /* where the frame is, -1 unknown */
	ht_id place;       /* the frame's method id (frames.c), once named */
	bool native;       /* the frame's method is native */
	bool empty;        /* a frame of the stack whose locals hold nothing:
			      no root */
};

struct dump {
	struct agent *ag;
	struct object_rec *objs;
	size_t n_objs, cap_objs;
	ht_id *slots;
	size_t n_slots, cap_slots;
	struct extra_ref *extras;
	size_t n_extras, cap_extras;
	struct root_rec *roots;
	size_t n_roots, cap_roots;
	/* with values */
	struct value_rec *values;
	size_t n_values, cap_values;
	struct array_rec *arrays;
	size_t n_arrays, cap_arrays;
	uint8_t *bytes;
	size_t n_bytes, cap_bytes;
	/* where each object is in objs: tags handed out during this walk
	 * (from walk_base on, in order) in a plain array, older tags in a
	 * map */
	jlong walk_base;
	uint32_t *fresh;
	size_t n_fresh, cap_fresh;
	struct idmap index;
	struct idmap class_roots; /* class objects made roots, and the last */
	jlong last_class_root;
	jlong last_tag;         /* the referrer looked up last, and where */
	uint32_t last_index;
	bool no_memory;
	bool class_missing;     /* an object whose class tag was 0 */
	/* for making the events */
	ht_id *refs;
	size_t cap_refs;
	uint32_t *zeros;
	size_t cap_zeros;
	ht_id *fields;     /* the field of each of refs */
	size_t cap_fields;
	ht_id *value_fields; /* an object's values, named */
	uint64_t *value_bits;
	size_t cap_value_fields, cap_value_bits;
};

static void reset(struct dump *d)
{
	d->n_objs = d->n_slots = d->n_extras = d->n_roots = d->n_fresh = 0;
	d->n_values = d->n_arrays = d->n_bytes = 0;
	idmap_clear(&d->index);
	idmap_clear(&d->class_roots);
	d->last_class_root = 0;
	d->last_tag = 0;
	d->no_memory = false;
	d->class_missing = false;
}

void dump_free(struct dump *d)
{
	if (!d)
		return;
	free(d->objs);
	free(d->slots);
	free(d->extras);
	free(d->roots);
	free(d->refs);
	free(d->zeros);
	free(d->fields);
	free(d->values);
	free(d->arrays);
	free(d->bytes);
	free(d->value_fields);
	free(d->value_bits);
	free(d->fresh);
	idmap_free(&d->index);
	idmap_free(&d->class_roots);
	free(d);
}

/* ---- the walk's callback ------------------------------------------------- */

static uint32_t slots_for(const struct class_info *ci, jint length)
{
	if (!ci)
		return 0;
	switch (ci->kind) {
	case CLASS_INSTANCE:
		return ci->n_slots;
	case CLASS_OBJECT_ARRAY:
		return length > 0 ? (uint32_t)length : 0;
	default:
		return 0;
	}
}

/* Appends the record of a new object to objs. */
static int new_object(struct dump *d, jlong tag, jlong class_tag, jlong size,
		      jint length)
{
	const struct class_table *t = &d->ag->classes;
	const struct class_info *ci = classes_find(t, (ht_id)class_tag);
	struct object_rec *o;
	uint32_t n;

	/* a class object's references are none of java.lang.Class's
	 * fields: they are its loader, superclass, statics... */
	if ((ht_id)class_tag == t->class_class)
		ci = NULL;
	n = slots_for(ci, length);
	if (d->n_objs >= UINT32_MAX - 1 ||
	    ALLOC_GROW(d->objs, d->n_objs + 1, d->cap_objs) ||
	    ALLOC_GROW(d->slots, d->n_slots + n, d->cap_slots))
		return -1;
	o = &d->objs[d->n_objs++];
	o->id = (ht_id)tag;
	o->cls = (ht_id)class_tag;
	o->class_ref = 0;
	o->size = (uint64_t)size;
	o->first = d->n_slots;
	o->n_slots = n;
	o->n_extra = 0;
	o->class_index = ci ? (uint32_t)(ci - t->v) : NO_CLASS;
	memset(d->slots + d->n_slots, 0, n * sizeof(*d->slots));
	d->n_slots += n;
	if (class_tag == 0)
		d->class_missing = true;
	return 0;
}

/* Where the object tagged tag is in objs; false if it is not there. */
static bool find_object(const struct dump *d, jlong tag, uint32_t *index)
{
	if (tag >= d->walk_base) {
		if ((size_t)(tag - d->walk_base) >= d->n_fresh)
			return false;
		*index = d->fresh[tag - d->walk_base];
		return true;
	}
	return idmap_get(&d->index, (uint64_t)tag, index);
}

/* The record of the object tagged tag, made on first sight; fresh when
 * the walk has just tagged it. */
static int object_for(struct dump *d, jlong tag, bool fresh, jlong class_tag,
		      jlong size, jint length)
{
	uint32_t at = (uint32_t)d->n_objs;
	int rc;

	if (fresh) {
		if (ALLOC_GROW(d->fresh, d->n_fresh + 1, d->cap_fresh) < 0)
			return -1;
		d->fresh[d->n_fresh++] = at;
		return new_object(d, tag, class_tag, size, length);
	}
	/* tagged earlier in this walk: recorded then */
	if (tag >= d->walk_base)
		return 0;
	rc = idmap_get_or_add(&d->index, (uint64_t)tag, &at);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return new_object(d, tag, class_tag, size, length);
}

/* The walk reports an object's references one after the other: the
 * referrer is remembered between them. */
static bool find_referrer(struct dump *d, jlong tag, uint32_t *index)
{
	if (tag == d->last_tag) {
		*index = d->last_index;
		return true;
	}
	if (!find_object(d, tag, index))
		return false;
	d->last_tag = tag;
	d->last_index = *index;
	return true;
}

static int note_root(struct dump *d, enum root_group group, ht_id owner,
		     jint depth, jmethodID method, jlong target)
{
	struct root_rec *r;

	if (ALLOC_GROW(d->roots, d->n_roots + 1, d->cap_roots) < 0)
		return -1;
	r = &d->roots[d->n_roots];
	r->group = (uint8_t)group;
	r->owner = owner;
	r->depth = method ? depth : -1;
	r->method = method;
	r->target = (ht_id)target;
	r->seq = (uint32_t)d->n_roots++;
	r->location = -1;
	r->place = 0;
	r->native = false;
	r->empty = false;
	return 0;
}

/*
 * A system class's object is a root of the class (C_RT_CLASS), as JVMTI
 * reports it. Other class objects are reached as the JVM keeps them: by
 * the <class> link of each instance, the <super> link of each subclass,
 * and their loader's list, as in an HPROF dump.
 */
static int root_class_object(struct dump *d, jlong class_object)
{
	uint32_t unused = 0;
	int rc;

	if (class_object == d->last_class_root)
		return 0;
	d->last_class_root = class_object;
	rc = idmap_get_or_add(&d->class_roots, (uint64_t)class_object, &unused);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return note_root(d, G_CLASS, (ht_id)class_object, -1, NULL,
			 class_object);
}

static int root_reference(struct dump *d, jvmtiHeapReferenceKind kind,
			  const jvmtiHeapReferenceInfo *info, jlong target)
{
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_THREAD:
		return note_root(d, G_THREAD, (ht_id)target, -1, NULL, target);
	case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
		if (note_root(d, G_THREAD, (ht_id)info->stack_local.thread_tag,
			      info->stack_local.depth, info->stack_local.method,
			      target) < 0)
			return -1;
		d->roots[d->n_roots - 1].location =
			info->stack_local.location;
		return 0;
	case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
		return note_root(d, G_THREAD, (ht_id)info->jni_local.thread_tag,
				 info->jni_local.depth, info->jni_local.method,
				 target);
	case JVMTI_HEAP_REFERENCE_JNI_GLOBAL:
		return note_root(d, G_STRONG, 0, -1, NULL, target);
	case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS:
		return root_class_object(d, target);
	case JVMTI_HEAP_REFERENCE_MONITOR:
		return note_root(d, G_MONITOR, 0, -1, NULL, target);
	default:
		return note_root(d, G_OTHER, 0, -1, NULL, target);
	}
}

static int add_extra(struct dump *d, uint32_t object, jlong target,
		     jint field_index, bool is_static, ht_id link)
{
	struct extra_ref *e;

	if (d->n_extras >= UINT32_MAX ||
	    ALLOC_GROW(d->extras, d->n_extras + 1, d->cap_extras) < 0)
		return -1;
	e = &d->extras[d->n_extras];
	e->object = object;
	e->seq = (uint32_t)d->n_extras++;
	e->target = (ht_id)target;
	e->field_index = field_index;
	e->is_static = is_static;
	e->link = link;
	d->objs[object].n_extra++;
	return 0;
}

/* The slot of field index in o, or -1 when it has none. */
static int64_t field_slot(const struct dump *d, const struct object_rec *o,
			  jint index)
{
	const struct class_info *ci;
	int64_t at;

	if (o->class_index == NO_CLASS)
		return -1;
	ci = &d->ag->classes.v[o->class_index];
	at = (int64_t)index - ci->first_index;
	if (at < 0 || at >= ci->n_fields || ci->slot_of[at] < 0 ||
	    (uint32_t)ci->slot_of[at] >= o->n_slots)
		return -1;
	return ci->slot_of[at];
}

/* The link a class object's reference of that kind is, 0 for none. */
static ht_id link_of(jvmtiHeapReferenceKind kind)
{
	switch (kind) {
	case JVMTI_HEAP_REFERENCE_SUPERCLASS:
		return HT_LINK_ID_SUPER;
	case JVMTI_HEAP_REFERENCE_CLASS_LOADER:
		return HT_LINK_ID_LOADER;
	case JVMTI_HEAP_REFERENCE_SIGNERS:
		return HT_LINK_ID_SIGNERS;
	case JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN:
		return HT_LINK_ID_DOMAIN;
	default:
		return 0;
	}
}

static int object_reference(struct dump *d, jvmtiHeapReferenceKind kind,
			    const jvmtiHeapReferenceInfo *info, jlong referrer,
			    jlong target)
{
	struct object_rec *o;
	uint32_t from;
	int64_t slot = -1;

	/* the referrer was reported (and tagged) before its references */
	if (!find_referrer(d, referrer, &from))
		return 0;
	o = &d->objs[from];
	if (kind == JVMTI_HEAP_REFERENCE_CLASS) {
		o->class_ref = (ht_id)target;
		return 0;
	}
	/* a static field's value is a reference of its class's object, as
	 * in an HPROF dump: the class keeps it, and its loader with it */
	if (kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD)
		return add_extra(d, from, target, info->field.index, true, 0);
	if (link_of(kind))
		return add_extra(d, from, target, -1, false, link_of(kind));
	if (kind == JVMTI_HEAP_REFERENCE_FIELD)
		slot = field_slot(d, o, info->field.index);
	else if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT &&
		 info->array.index >= 0 &&
		 (uint32_t)info->array.index < o->n_slots)
		slot = info->array.index;
	if (slot < 0)
		return add_extra(d, from, target,
				 kind == JVMTI_HEAP_REFERENCE_FIELD ?
				 info->field.index : -1, false, 0);
	d->slots[o->first + (size_t)slot] = (ht_id)target;
	return 0;
}

static jint JNICALL on_reference(jvmtiHeapReferenceKind kind,
				 const jvmtiHeapReferenceInfo *info,
				 jlong class_tag, jlong referrer_class_tag,
				 jlong size, jlong *tag_ptr,
				 jlong *referrer_tag_ptr, jint length,
				 void *user_data)
{
	struct dump *d = user_data;
	bool fresh = *tag_ptr == 0;
	int rc;

	(void)referrer_class_tag;
	if (fresh)
		*tag_ptr = agent_new_tag(d->ag);
	if (object_for(d, *tag_ptr, fresh, class_tag, size, length) < 0)
		goto no_memory;
	if (!referrer_tag_ptr)
		rc = root_reference(d, kind, info, *tag_ptr);
	else if (*referrer_tag_ptr == 0)
		rc = 0; /* cannot be: a referrer is reported first */
	else
		rc = object_reference(d, kind, info, *referrer_tag_ptr,
				      *tag_ptr);
	if (rc < 0)
		goto no_memory;
	return JVMTI_VISIT_OBJECTS;
no_memory:
	d->no_memory = true;
	return JVMTI_VISIT_ABORT;
}

/* A primitive field's value as values carries it (trace.h): signed types
 * sign-extended, char and boolean unsigned, float and double their IEEE
 * bits. */
static uint64_t value_bits(unsigned type, jvalue v)
{
	uint32_t f;
	uint64_t d;

	switch (type) {
	case HT_TYPE_BOOLEAN:
		return v.z;
	case HT_TYPE_CHAR:
		return v.c;
	case HT_TYPE_BYTE:
		return (uint64_t)(int64_t)v.b;
	case HT_TYPE_SHORT:
		return (uint64_t)(int64_t)v.s;
	case HT_TYPE_INT:
		return (uint64_t)(int64_t)v.i;
	case HT_TYPE_FLOAT:
		memcpy(&f, &v.f, sizeof(f));
		return f;
	case HT_TYPE_DOUBLE:
		memcpy(&d, &v.d, sizeof(d));
		return d;
	default:
		return (uint64_t)v.j;
	}
}

static jint JNICALL on_primitive_field(jvmtiHeapReferenceKind kind,
				       const jvmtiHeapReferenceInfo *info,
				       jlong object_class_tag,
				       jlong *object_tag_ptr, jvalue value,
				       jvmtiPrimitiveType value_type,
				       void *user_data)
{
	struct dump *d = user_data;
	unsigned type = java_value_type((char)value_type);
	struct value_rec *v;
	uint32_t at;

	(void)object_class_tag;
	/* the object was reached, and tagged, before it is visited */
	if (!type || !find_referrer(d, *object_tag_ptr, &at))
		return 0;
	if (d->n_values >= UINT32_MAX ||
	    ALLOC_GROW(d->values, d->n_values + 1, d->cap_values) < 0) {
		d->no_memory = true;
		return JVMTI_VISIT_ABORT;
	}
	v = &d->values[d->n_values];
	v->object = at;
	v->seq = (uint32_t)d->n_values++;
	v->field_index = info->field.index;
	v->is_static = kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD;
	v->bits = value_bits(type, value);
	return 0;
}

static jint JNICALL on_primitive_array(jlong class_tag, jlong size,
				       jlong *tag_ptr, jint element_count,
				       jvmtiPrimitiveType element_type,
				       const void *elements, void *user_data)
{
	struct dump *d = user_data;
	unsigned type = java_value_type((char)element_type);
	uint64_t count = element_count > 0 ? (uint64_t)element_count : 0;
	struct ht_array_values kept;
	struct array_rec *a;
	size_t bytes;
	uint32_t at;

	(void)class_tag;
	(void)size;
	/* what the format keeps of it: the library's rule */
	if (!ht_array_values_of(type, elements, count, &kept) ||
	    !find_referrer(d, *tag_ptr, &at))
		return 0;
	bytes = (size_t)kept.stored * ht_value_type_width(type);
	/* a byte more: the contents of an empty array point somewhere */
	if (ALLOC_GROW(d->arrays, d->n_arrays + 1, d->cap_arrays) < 0 ||
	    ALLOC_GROW(d->bytes, d->n_bytes + bytes + 1, d->cap_bytes) < 0) {
		d->no_memory = true;
		return JVMTI_VISIT_ABORT;
	}
	a = &d->arrays[d->n_arrays++];
	*a = (struct array_rec){.object = at, .type = (uint8_t)type,
				.length = count, .stored = kept.stored,
				.at = d->n_bytes, .hash = kept.hash};
	if (bytes)
		memcpy(d->bytes + d->n_bytes, elements, bytes);
	d->n_bytes += bytes;
	return 0;
}

/* ---- after the walk: what the events need that the walk could not ask ---- */

/*
 * Objects whose class was loaded after the sweep came with class tag 0;
 * their class is looked up now. Their references went to extras (no
 * layout was known), in the order the walk reported them.
 */
static void find_missing_classes(struct dump *d, JNIEnv *jni)
{
	jvmtiEnv *jv = d->ag->jvmti;
	jlong *tags, *found_tags = NULL;
	jobject *found = NULL;
	jint n = 0, n_found = 0;

	tags = malloc(d->n_objs * sizeof(*tags));
	if (!tags)
		return;
	for (size_t i = 0; i < d->n_objs && n < INT32_MAX; i++)
		if (!d->objs[i].cls)
			tags[n++] = (jlong)d->objs[i].id;
	if (n == 0 || (*jni)->PushLocalFrame(jni, n + 16) != 0) {
		free(tags);
		return;
	}
	if ((*jv)->GetObjectsWithTags(jv, n, tags, &n_found, &found,
				      &found_tags) == JVMTI_ERROR_NONE) {
		for (jint i = 0; i < n_found; i++) {
			jclass k = (*jni)->GetObjectClass(jni, found[i]);
			uint32_t at;

			if (k && find_object(d, found_tags[i], &at))
				d->objs[at].cls =
					(ht_id)classes_learn(d->ag, jni, k);
		}
		(*jv)->Deallocate(jv, (unsigned char *)found);
		(*jv)->Deallocate(jv, (unsigned char *)found_tags);
	}
	(*jni)->PopLocalFrame(jni, NULL);
	free(tags);
}

/* Thread events for the threads alive now, under their current names. */
static void name_threads(struct agent *ag, JNIEnv *jni)
{
	jvmtiEnv *jv = ag->jvmti;
	jthread *threads = NULL;
	jint n = 0;

	if ((*jni)->PushLocalFrame(jni, 1024) != 0)
		return;
	if ((*jv)->GetAllThreads(jv, &n, &threads) != JVMTI_ERROR_NONE) {
		(*jni)->PopLocalFrame(jni, NULL);
		return;
	}
	for (jint i = 0; i < n; i++) {
		jvmtiThreadInfo info;
		jlong tag = 0;

		if ((*jv)->GetTag(jv, threads[i], &tag) == JVMTI_ERROR_NONE &&
		    tag &&
		    (*jv)->GetThreadInfo(jv, threads[i], &info) ==
			    JVMTI_ERROR_NONE) {
			ht_thread(ag->rec, (ht_id)tag,
				  info.name ? info.name : "");
			(*jv)->Deallocate(jv, (unsigned char *)info.name);
			(*jni)->DeleteLocalRef(jni, info.thread_group);
			(*jni)->DeleteLocalRef(jni, info.context_class_loader);
		}
		(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	(*jv)->Deallocate(jv, (unsigned char *)threads);
	(*jni)->PopLocalFrame(jni, NULL);
}

/* ---- the events ---------------------------------------------------------- */

static int compare_roots(const void *pa, const void *pb)
{
	const struct root_rec *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->method != b->method)
		return (uintptr_t)a->method < (uintptr_t)b->method ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int compare_extras(const void *pa, const void *pb)
{
	const struct extra_ref *a = pa, *b = pb;

	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int compare_values(const void *pa, const void *pb)
{
	const struct value_rec *a = pa, *b = pb;

	if (a->object != b->object)
		return a->object < b->object ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int compare_arrays(const void *pa, const void *pb)
{
	const struct array_rec *a = pa, *b = pb;

	return a->object < b->object ? -1 : a->object > b->object;
}

static bool same_container(const struct root_rec *a, const struct root_rec *b)
{
	return a->group == b->group && a->owner == b->owner &&
	       a->depth == b->depth && a->method == b->method;
}

/* ---- the stacks --------------------------------------------------------- */

#define MAX_STACK_FRAMES 4096

/* The roots of thread `owner`, d->roots[*from..*to) (sorted: its own
 * first, then by depth); false when the walk found none. */
static bool thread_roots(const struct dump *d, ht_id owner, size_t *from,
			 size_t *to)
{
	size_t i = 0;

	while (i < d->n_roots && (d->roots[i].group != G_THREAD ||
				  d->roots[i].owner != owner))
		i++;
	*from = i;
	while (i < d->n_roots && d->roots[i].group == G_THREAD &&
	       d->roots[i].owner == owner)
		i++;
	*to = i;
	return *from < *to;
}

/* Whether the stack fr[0..n) has each frame of the walk's roots
 * d->roots[from..to) where the walk saw it. */
static bool stack_agrees(const struct dump *d, size_t from, size_t to,
			 const jvmtiFrameInfo *fr, jint n)
{
	for (size_t i = from; i < to; i++) {
		const struct root_rec *r = &d->roots[i];

		if (r->depth >= 0 &&
		    (r->depth >= n || fr[r->depth].method != r->method))
			return false;
	}
	return true;
}

/* The frames of thread `owner`'s stack whose locals held nothing in the
 * walk, as roots marked empty. 0, or -1 when out of memory. */
static int add_thread_frames(struct dump *d, jthread thread, ht_id owner,
			     jvmtiFrameInfo *fr)
{
	jvmtiEnv *jv = d->ag->jvmti;
	size_t from, to, at;
	jint n = 0;

	if (!thread_roots(d, owner, &from, &to) ||
	    (*jv)->GetStackTrace(jv, thread, 0, MAX_STACK_FRAMES, fr, &n) !=
		    JVMTI_ERROR_NONE ||
	    !stack_agrees(d, from, to, fr, n))
		return 0;
	at = from;
	for (jint depth = 0; depth < n; depth++) {
		while (at < to && d->roots[at].depth < depth)
			at++;
		if (at < to && d->roots[at].depth == depth)
			continue;
		if (note_root(d, G_THREAD, owner, depth, fr[depth].method,
			      0) < 0)
			return -1;
		d->roots[d->n_roots - 1].location = fr[depth].location;
		d->roots[d->n_roots - 1].empty = true;
	}
	return 0;
}

/* Every frame of the stacks of the threads the walk found roots of; the
 * roots sorted before and after. 0, or -1 when out of memory. */
static int add_stack_frames(struct dump *d, JNIEnv *jni)
{
	jvmtiEnv *jv = d->ag->jvmti;
	jvmtiFrameInfo *fr;
	jthread *threads = NULL;
	jint n = 0;
	int rc = 0;

	fr = malloc(MAX_STACK_FRAMES * sizeof(*fr));
	if (!fr)
		return -1;
	if ((*jni)->PushLocalFrame(jni, 16) != 0 ||
	    (*jv)->GetAllThreads(jv, &n, &threads) != JVMTI_ERROR_NONE) {
		free(fr);
		return 0;
	}
	for (jint i = 0; i < n && rc == 0; i++) {
		jlong tag = 0;

		if ((*jv)->GetTag(jv, threads[i], &tag) == JVMTI_ERROR_NONE &&
		    tag)
			rc = add_thread_frames(d, threads[i], (ht_id)tag, fr);
		(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	(*jv)->Deallocate(jv, (unsigned char *)threads);
	(*jni)->PopLocalFrame(jni, NULL);
	free(fr);
	qsort(d->roots, d->n_roots, sizeof(*d->roots), compare_roots);
	return rc;
}

/* Each frame's place (frames.c), from the walk's location of its locals,
 * else the stack's. */
static void name_frames(struct dump *d)
{
	for (size_t i = 0, j; i < d->n_roots; i = j) {
		struct root_rec *r = &d->roots[i];
		jlocation location = r->location;
		ht_id place = 0;
		bool native = false;

		for (j = i + 1; j < d->n_roots &&
				same_container(r, &d->roots[j]); j++)
			if (d->roots[j].location > location)
				location = d->roots[j].location;
		if (r->group != G_THREAD || r->depth < 0)
			continue;
		place = frames_place(d->ag, r->method, location, &native);
		for (size_t k = i; k < j; k++) {
			d->roots[k].place = place;
			d->roots[k].native = native;
		}
	}
}

/* A frame's id: its thread and its depth, which the JVM numbers from the
 * top of the stack. */
static ht_id frame_id(const struct root_rec *r)
{
	return r->owner << 24 | ((ht_id)r->depth & 0xffffff);
}

static void begin_container_of(struct dump *d, const struct root_rec *r,
			       const struct root_rec *prev)
{
	struct ht_recorder *rec = d->ag->rec;

	switch (r->group) {
	case G_THREAD:
		if (!prev || prev->group != G_THREAD || prev->owner != r->owner)
			ht_begin_container(rec, HT_C_RT_THREAD, r->owner, 0);
		if (r->depth < 0)
			break;
		ht_begin_container(rec, r->native ? HT_C_RT_NATIVE : HT_C_RT_JIT,
				   frame_id(r), r->place);
		break;
	case G_STRONG:
		ht_begin_container(rec, HT_C_RT_STRONGPTR, 0, 0);
		break;
	case G_CLASS:
		ht_begin_container(rec, HT_C_RT_CLASS, r->owner, 0);
		break;
	case G_MONITOR:
		ht_begin_container(rec, HT_C_RT_INTERNALVM, 0, 0);
		break;
	default:
		ht_begin_container(rec, HT_C_RT_ROOTTABLE, 0, 0);
		break;
	}
}

static void record_roots(struct dump *d)
{
	size_t i = 0;

	while (i < d->n_roots) {
		const struct root_rec *r = &d->roots[i];
		size_t n = 0, run = 0;

		begin_container_of(d, r, i ? &d->roots[i - 1] : NULL);
		for (; i + run < d->n_roots &&
		       same_container(r, &d->roots[i + run]); run++) {
			if (d->roots[i + run].empty)
				continue;
			d->refs[n++] = d->roots[i + run].target;
		}
		/* no root is a field: statics are their class's references */
		if (n)
			ht_root_references(d->ag->rec, n, d->refs, d->zeros,
					   NULL, NULL, NULL, HT_RESULT_OK);
		i += run;
	}
}

/* The field of a reference the layout did not place, 0 for none. */
static ht_id extra_field(const struct dump *d, const struct object_rec *o,
			 const struct extra_ref *e)
{
	const struct class_table *t = &d->ag->classes;

	if (e->link)
		return e->link;
	if (e->is_static)
		return classes_static_field(classes_find(t, o->id),
					    e->field_index);
	if (e->field_index < 0 || o->cls == t->class_class)
		return 0;
	return classes_instance_field(classes_find(t, o->cls), e->field_index);
}

/* The fields of an instance's slots; NULL for an array or a class object,
 * whose references are no fields. */
static const ht_id *slot_fields(const struct dump *d,
				const struct object_rec *o)
{
	const struct class_info *ci;

	if (o->class_index == NO_CLASS)
		return NULL;
	ci = &d->ag->classes.v[o->class_index];
	return ci->kind == CLASS_INSTANCE && ci->slot_field ? ci->slot_field :
							      NULL;
}

/* The field a value the walk reported is, 0 when unknown. */
static ht_id value_field(const struct dump *d, const struct object_rec *o,
			 const struct value_rec *v)
{
	const struct class_table *t = &d->ag->classes;

	if (v->is_static)
		return classes_static_field(classes_find(t, o->id),
					    v->field_index);
	if (o->cls == t->class_class)
		return 0;
	return classes_value_field(classes_find(t, o->cls), v->field_index);
}

/* The object i's values from d->values[*v...] (sorted by object), named,
 * into ev; its array's contents from d->arrays[*a] when it is an array.
 * Values whose field is unknown are left out. */
static void object_values(struct dump *d, uint32_t i, size_t *v, size_t *a,
			  struct ht_ev_object_references *ev,
			  struct ht_array_values *array)
{
	size_t n = 0;

	for (; *v < d->n_values && d->values[*v].object == i; (*v)++) {
		ht_id field = value_field(d, &d->objs[i], &d->values[*v]);

		if (!field)
			continue;
		d->value_fields[n] = field;
		d->value_bits[n++] = d->values[*v].bits;
	}
	ev->n_values = n;
	ev->value_fields = n ? d->value_fields : NULL;
	ev->values = n ? d->value_bits : NULL;
	ev->array = NULL;
	if (*a < d->n_arrays && d->arrays[*a].object == i) {
		const struct array_rec *r = &d->arrays[(*a)++];

		*array = (struct ht_array_values){
			.type = r->type, .length = r->length,
			.stored = r->stored, .data = d->bytes + r->at,
			.hash = r->hash};
		ev->array = array;
	}
}

/* An object's event; with values, through the event form, which carries
 * them. */
static void record_object(struct dump *d, const struct object_rec *o,
			  size_t n, const ht_id *refs, const ht_id *fields,
			  size_t *v, size_t *a)
{
	struct ht_array_values array;
	struct ht_event ev = {.type = HT_EV_OBJECT_REFERENCES};
	struct ht_ev_object_references *r = &ev.u.object_references;

	if (!d->ag->opt.values) {
		ht_object_references_fields(d->ag->rec, o->id, o->cls, o->size,
					    0, n, refs, NULL, fields, -1,
					    HT_RESULT_OK);
		return;
	}
	r->id = o->id;
	r->class_id = o->cls;
	r->size = o->size;
	r->count = n;
	r->refs = refs;
	r->ref_fields = fields;
	r->result = HT_RESULT_OK;
	object_values(d, (uint32_t)(o - d->objs), v, a, r, &array);
	ht_record_event(d->ag->rec, &ev);
}

/* An object's references, its link to its class first, as the HPROF
 * reader gives them, so that an array's elements keep their places. */
static void record_objects(struct dump *d)
{
	size_t e = 0, v = 0, a = 0;

	for (size_t i = 0; i < d->n_objs; i++) {
		const struct object_rec *o = &d->objs[i];
		const ht_id *refs = d->slots + o->first;
		const ht_id *fields = slot_fields(d, o);
		size_t n = o->n_slots;

		if (o->n_extra || o->class_ref) {
			bool any_field = fields != NULL;
			size_t k0 = o->class_ref ? 1 : 0;

			memcpy(d->refs + k0, refs, n * sizeof(*refs));
			if (fields)
				memcpy(d->fields + k0, fields,
				       n * sizeof(*fields));
			else
				memset(d->fields + k0, 0, n * sizeof(*fields));
			if (k0) {
				d->refs[0] = o->class_ref;
				d->fields[0] = HT_LINK_ID_CLASS;
				any_field = true;
			}
			n += k0;
			for (uint32_t k = 0; k < o->n_extra; k++, e++) {
				d->refs[n] = d->extras[e].target;
				d->fields[n] = extra_field(d, o, &d->extras[e]);
				any_field |= d->fields[n++] != 0;
			}
			refs = d->refs;
			fields = any_field ? d->fields : NULL;
		}
		record_object(d, o, n, refs, fields, &v, &a);
	}
}

/* The most values one object has (d->values sorted by object). */
static size_t most_values(const struct dump *d)
{
	size_t most = 0;

	for (size_t i = 0, j; i < d->n_values; i = j) {
		for (j = i + 1; j < d->n_values &&
				d->values[j].object == d->values[i].object; j++)
			;
		if (j - i > most)
			most = j - i;
	}
	return most;
}

/* Scratch arrays as long as the longest root run, reference list or list
 * of values. */
static int prepare_scratch(struct dump *d)
{
	size_t longest = d->n_roots, most = most_values(d);

	for (size_t i = 0; i < d->n_objs; i++) {
		size_t n = (size_t)d->objs[i].n_slots + d->objs[i].n_extra + 1;

		if (n > longest)
			longest = n;
	}
	if (ALLOC_GROW(d->refs, longest + 1, d->cap_refs) ||
	    ALLOC_GROW(d->fields, longest + 1, d->cap_fields) ||
	    ALLOC_GROW(d->zeros, d->n_roots + 1, d->cap_zeros) ||
	    ALLOC_GROW(d->value_fields, most + 1, d->cap_value_fields) ||
	    ALLOC_GROW(d->value_bits, most + 1, d->cap_value_bits))
		return -1;
	memset(d->zeros, 0, (d->n_roots + 1) * sizeof(*d->zeros));
	return 0;
}

/* The events, under record_lock so that no GC comes between them. Only
 * the shim is called while it is held. */
static void record_dump(struct dump *d)
{
	struct agent *ag = d->ag;
	jvmtiEnv *jv = ag->jvmti;

	(*jv)->RawMonitorEnter(jv, ag->record_lock);
	if (!ag->closed) {
		ht_begin_container(ag->rec, HT_C_BEGIN, 0, 0);
		record_roots(d);
		ht_begin_container(ag->rec, HT_C_HEAP, 0, 0);
		record_objects(d);
		ht_begin_container(ag->rec, HT_C_END, 0, 0);
	}
	(*jv)->RawMonitorExit(jv, ag->record_lock);
}

/* ---- one dump ------------------------------------------------------------ */

static struct dump *dump_scratch(struct agent *ag)
{
	if (!ag->dump) {
		ag->dump = calloc(1, sizeof(*ag->dump));
		if (!ag->dump)
			return NULL;
		ag->dump->ag = ag;
		idmap_init(&ag->dump->index);
		idmap_init(&ag->dump->class_roots);
	}
	reset(ag->dump);
	return ag->dump;
}

static int walk(struct dump *d, const char *why)
{
	jvmtiEnv *jv = d->ag->jvmti;
	jvmtiHeapCallbacks cb;
	jvmtiError err;

	memset(&cb, 0, sizeof(cb));
	cb.heap_reference_callback = on_reference;
	if (d->ag->opt.values) {
		cb.primitive_field_callback = on_primitive_field;
		cb.array_primitive_value_callback = on_primitive_array;
	}
	/* only the walk hands out tags from here on: no sample meanwhile
	 * (sites.c) */
	sites_hold(d->ag);
	d->walk_base = d->ag->next_tag;
	err = (*jv)->FollowReferences(jv, 0, NULL, NULL, &cb, d);
	sites_release(d->ag);
	if (d->no_memory) {
		say("dump (%s) skipped: out of memory during the heap "
			   "walk", why);
		return -1;
	}
	if (err != JVMTI_ERROR_NONE) {
		say("dump (%s) skipped: the heap walk failed (JVMTI "
			   "FollowReferences error %d)", why, (int)err);
		return -1;
	}
	return 0;
}

static double elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) * 1e3 +
	       (double)(now.tv_nsec - since->tv_nsec) / 1e6;
}

int dump_heap(struct agent *ag, JNIEnv *jni, const char *why)
{
	struct timespec start;
	struct dump *d = dump_scratch(ag);
	double walked_ms;

	clock_gettime(CLOCK_MONOTONIC, &start);
	if (!d) {
		say("dump (%s) skipped: out of memory", why);
		return -1;
	}
	/* classes first: the walk gives each object its class's tag, 0 for
	 * a class not tagged yet */
	if (classes_sweep(ag, jni) < 0)
		say("some classes could not be looked at; their "
			   "objects' references are listed unordered");
	if (walk(d, why) < 0)
		return -1;
	walked_ms = elapsed_ms(&start);
	if (d->class_missing)
		find_missing_classes(d, jni);
	/* classes loaded since the sweep may have been reached: name them */
	classes_sweep(ag, jni);
	name_threads(ag, jni);
	qsort(d->roots, d->n_roots, sizeof(*d->roots), compare_roots);
	if (add_stack_frames(d, jni) < 0) {
		say("dump (%s) skipped: out of memory", why);
		return -1;
	}
	name_frames(d);
	qsort(d->extras, d->n_extras, sizeof(*d->extras), compare_extras);
	/* none without values, and qsort takes no null array */
	if (d->n_values)
		qsort(d->values, d->n_values, sizeof(*d->values),
		      compare_values);
	if (d->n_arrays)
		qsort(d->arrays, d->n_arrays, sizeof(*d->arrays),
		      compare_arrays);
	if (prepare_scratch(d) < 0) {
		say("dump (%s) skipped: out of memory", why);
		return -1;
	}
	record_dump(d);
	ag->dumps_taken++;
	if (ag->opt.verbose && ag->opt.values)
		say("dump %llu (%s): %zu objects, %zu roots, %zu values, "
			   "%zu arrays, %.1f ms (walk %.1f ms)",
			   (unsigned long long)ag->dumps_taken - 1, why,
			   d->n_objs, d->n_roots, d->n_values, d->n_arrays,
			   elapsed_ms(&start), walked_ms);
	else if (ag->opt.verbose)
		say("dump %llu (%s): %zu objects, %zu roots, %.1f ms "
			   "(walk %.1f ms)",
			   (unsigned long long)ag->dumps_taken - 1, why,
			   d->n_objs, d->n_roots, elapsed_ms(&start),
			   walked_ms);
	return 0;
}
