/*
 * classes.c - the classes the agent knows: each loaded class gets a tag
 * (its class id), a class event with its Java name, a fields event with
 * the reference fields it declares (and with values, its primitive ones,
 * typed), and for an instance class the slot of each reference field, so
 * that the references the heap walk reports by field index land in field
 * order with nulls kept, each with its field, and the field id of each
 * primitive instance field, which names the values the walk reports.
 *
 * All of it needs JVMTI and JNI calls, which a heap walk's callbacks may
 * not make: it runs before each walk, over every loaded class, and after
 * it for the classes loaded meanwhile.
 */
#include "recorders/jvm/agent.h"
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

#define ACC_STATIC 0x0008

void classes_init(struct class_table *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->by_tag);
}

void classes_free(struct class_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].slot_of);
		free(t->v[i].slot_field);
		free(t->v[i].value_of);
		free(t->v[i].own_fields);
	}
	free(t->v);
	idmap_free(&t->by_tag);
	classes_init(t);
}

const struct class_info *classes_find(const struct class_table *t, ht_id tag)
{
	uint32_t i;

	return tag && idmap_get(&t->by_tag, tag, &i) ? &t->v[i] : NULL;
}

ht_id classes_instance_field(const struct class_info *ci, jint index)
{
	int64_t at;

	if (!ci || !ci->slot_of)
		return 0;
	at = (int64_t)index - ci->first_index;
	if (at < 0 || at >= ci->n_fields || ci->slot_of[at] < 0)
		return 0;
	return ci->slot_field[ci->slot_of[at]];
}

ht_id classes_value_field(const struct class_info *ci, jint index)
{
	int64_t at;

	if (!ci || !ci->value_of)
		return 0;
	at = (int64_t)index - ci->first_index;
	return at >= 0 && at < ci->n_fields ? ci->value_of[at] : 0;
}

ht_id classes_static_field(const struct class_info *ci, jint index)
{
	int64_t at;

	if (!ci || !ci->own_fields)
		return 0;
	at = (int64_t)index - ci->own_first_index;
	return at >= 0 && at < ci->n_own ? ci->own_fields[at] : 0;
}

/* ---- layouts ------------------------------------------------------------- */

/* A growable list of local class references. */
struct class_list {
	jclass *v;
	size_t n, cap;
};

static int list_add(struct class_list *l, jclass k)
{
	if (ALLOC_GROW(l->v, l->n + 1, l->cap) < 0)
		return -1;
	l->v[l->n++] = k;
	return 0;
}

static bool list_has(JNIEnv *jni, const struct class_list *l, jclass k)
{
	for (size_t i = 0; i < l->n; i++)
		if ((*jni)->IsSameObject(jni, l->v[i], k))
			return true;
	return false;
}

/* Adds k's interfaces and, transitively, theirs to l. */
static int add_interfaces(jvmtiEnv *jv, JNIEnv *jni, jclass k,
			  struct class_list *l)
{
	jint n = 0;
	jclass *ifs = NULL;
	int rc = 0;

	if ((*jv)->GetImplementedInterfaces(jv, k, &n, &ifs) !=
	    JVMTI_ERROR_NONE)
		return -1;
	for (jint i = 0; i < n && rc == 0; i++) {
		if (list_has(jni, l, ifs[i]))
			continue;
		rc = list_add(l, ifs[i]);
		if (rc == 0)
			rc = add_interfaces(jv, jni, ifs[i], l);
	}
	(*jv)->Deallocate(jv, (unsigned char *)ifs);
	return rc;
}

static jint field_count(jvmtiEnv *jv, jclass k)
{
	jint n = 0;
	jfieldID *fields = NULL;

	if ((*jv)->GetClassFields(jv, k, &n, &fields) != JVMTI_ERROR_NONE)
		return -1;
	(*jv)->Deallocate(jv, (unsigned char *)fields);
	return n;
}

/* What a field of an instance holds, as its slot and value tables
 * need it. */
enum field_role {
	ROLE_OTHER,     /* a static, or a field JVMTI cannot describe */
	ROLE_REFERENCE, /* an instance reference field: a slot */
	ROLE_PRIMITIVE, /* an instance primitive field: a value */
};

static enum field_role field_role(jvmtiEnv *jv, jclass k, jfieldID f)
{
	char *sig = NULL;
	jint mods = 0;
	enum field_role role;

	if ((*jv)->GetFieldModifiers(jv, k, f, &mods) != JVMTI_ERROR_NONE ||
	    (mods & ACC_STATIC))
		return ROLE_OTHER;
	if ((*jv)->GetFieldName(jv, k, f, NULL, &sig, NULL) != JVMTI_ERROR_NONE)
		return ROLE_OTHER;
	role = sig[0] == 'L' || sig[0] == '[' ? ROLE_REFERENCE :
	       java_value_type(sig[0]) ? ROLE_PRIMITIVE : ROLE_OTHER;
	(*jv)->Deallocate(jv, (unsigned char *)sig);
	return role;
}

/* The entry of class k, if it is known. */
static const struct class_info *entry_of(struct agent *ag, jclass k)
{
	jlong tag = 0;

	if ((*ag->jvmti)->GetTag(ag->jvmti, k, &tag) != JVMTI_ERROR_NONE)
		return NULL;
	return classes_find(&ag->classes, (ht_id)tag);
}

/* The field an instance of ci holds in a slot of field id `field`: for
 * Reference.referent in a Soft, Weak, Final or PhantomReference, the
 * synthetic referent of its strength, so that analyses know how strongly
 * it holds. */
static ht_id slot_field(const struct agent *ag, const struct class_info *ci,
			ht_id field)
{
	if (ci->strength_field && field &&
	    field == ag->classes.referent_field)
		return ci->strength_field;
	return field;
}

/* Appends the slots of k's own fields to ci (slot_of, slot_field and,
 * with values, value_of have room); each slot takes the field id k's
 * entry gave the field, and so does each primitive field's value. */
static int layout_fields(struct agent *ag, jclass k, struct class_info *ci,
			 uint32_t room)
{
	jvmtiEnv *jv = ag->jvmti;
	const struct class_info *own = entry_of(ag, k);
	jint n = 0;
	jfieldID *fields = NULL;

	if ((*jv)->GetClassFields(jv, k, &n, &fields) != JVMTI_ERROR_NONE)
		return -1;
	if (own && own->n_own != (uint32_t)n)
		own = NULL; /* cannot be: the fields of a class do not change */
	for (jint i = 0; i < n && ci->n_fields < room; i++) {
		ht_id id = own && own->own_fields ? own->own_fields[i] : 0;
		enum field_role role = field_role(jv, k, fields[i]);

		if (ci->value_of)
			ci->value_of[ci->n_fields] =
				role == ROLE_PRIMITIVE ? id : 0;
		if (role != ROLE_REFERENCE) {
			ci->slot_of[ci->n_fields++] = -1;
			continue;
		}
		ci->slot_field[ci->n_slots] = slot_field(ag, ci, id);
		ci->slot_of[ci->n_fields++] = (int32_t)ci->n_slots++;
	}
	(*jv)->Deallocate(jv, (unsigned char *)fields);
	return 0;
}

/* One field for a fields event: its name (malloc'ed), its kind and its
 * type (0 for a reference); false when JVMTI or memory fails. */
static bool describe_field(jvmtiEnv *jv, jclass k, jfieldID f,
			   struct ht_field *out)
{
	char *jname = NULL, *sig = NULL;
	jint mods = 0;
	bool ok = false;

	out->name = NULL;
	if ((*jv)->GetFieldName(jv, k, f, &jname, &sig, NULL) ==
		    JVMTI_ERROR_NONE &&
	    (*jv)->GetFieldModifiers(jv, k, f, &mods) == JVMTI_ERROR_NONE &&
	    (sig[0] == 'L' || sig[0] == '[' || java_value_type(sig[0]))) {
		out->name = java_utf8(jname);
		out->kind = mods & ACC_STATIC ? HT_FIELD_STATIC :
						HT_FIELD_INSTANCE;
		out->type = (uint8_t)java_value_type(sig[0]);
		ok = out->name != NULL;
	}
	(*jv)->Deallocate(jv, (unsigned char *)sig);
	(*jv)->Deallocate(jv, (unsigned char *)jname);
	return ok;
}

/* The turn in which a field gets its id: references first, then (with
 * values) primitive instance fields, then primitive statics, as the HPROF
 * reader numbers them, so that a trace without values numbers its fields
 * as before values existed. */
static int id_turn(const struct ht_field *f)
{
	if (!f->type)
		return 0;
	return f->kind == HT_FIELD_STATIC ? 2 : 1;
}

void classes_declare_links(struct agent *ag)
{
	static const struct ht_field links[] = {
		{.id = HT_LINK_ID_CLASS, .name = HT_LINK_CLASS},
		{.id = HT_LINK_ID_SUPER, .name = HT_LINK_SUPER},
		{.id = HT_LINK_ID_LOADER, .name = HT_LINK_LOADER},
		{.id = HT_LINK_ID_SIGNERS, .name = HT_LINK_SIGNERS},
		{.id = HT_LINK_ID_DOMAIN, .name = HT_LINK_DOMAIN},
	};

	if (ag->next_field_id != 1)
		return;
	ht_fields(ag->rec, ARRAY_SIZE(links), links);
	ag->next_field_id = HT_LINK_ID_END;
}

/* A strength class (describe set its referent_kind, and it has no strength
 * field from a superclass) declares the synthetic referent of its kind. */
static void declare_strength(struct agent *ag, struct class_info *ci)
{
	struct ht_field f = {.class_id = ci->tag, .name = "referent"};

	if (!ci->referent_kind || ci->strength_field)
		return;
	classes_declare_links(ag);
	f.id = ci->strength_field = ag->next_field_id++;
	f.kind = ci->referent_kind;
	ht_fields(ag->rec, 1, &f);
}

/*
 * Gives each reference field k declares (static or not), and with values
 * each primitive one, a field id and records them in one fields event; ci
 * is k's entry. The ids are small and dense, so that references encode
 * short. 0, or -1.
 */
static int declare_fields(struct agent *ag, jclass k, struct class_info *ci)
{
	jvmtiEnv *jv = ag->jvmti;
	struct ht_field *decl = NULL;
	jfieldID *fields = NULL;
	jint *own_index = NULL;
	size_t n_decl = 0, n_named = 0;
	jint n = 0;
	int rc = -1;

	if ((*jv)->GetClassFields(jv, k, &n, &fields) != JVMTI_ERROR_NONE)
		return -1;
	classes_declare_links(ag);
	ci->own_fields = calloc(n ? (size_t)n : 1, sizeof(*ci->own_fields));
	decl = calloc(n ? (size_t)n : 1, sizeof(*decl));
	own_index = calloc(n ? (size_t)n : 1, sizeof(*own_index));
	if (!ci->own_fields || !decl || !own_index)
		goto out;
	for (jint i = 0; i < n; i++) {
		if (!describe_field(jv, k, fields[i], &decl[n_named]))
			continue;
		own_index[n_named++] = i;
	}
	/* a primitive field without values is left out: freed, after the
	 * ones declared */
	for (int turn = 0; turn <= (ag->opt.values ? 2 : 0); turn++)
		for (size_t j = 0; j < n_named; j++) {
			struct ht_field *f = &decl[j];

			if (id_turn(f) != turn)
				continue;
			f->id = ag->next_field_id++;
			f->class_id = ci->tag;
			ci->own_fields[own_index[j]] = f->id;
			if (ci->tag == ag->classes.reference_class && !f->type &&
			    f->kind == HT_FIELD_INSTANCE &&
			    strcmp(f->name, "referent") == 0)
				ag->classes.referent_field = f->id;
		}
	for (size_t j = 0; j < n_named; j++) {
		struct ht_field kept = decl[j];

		if (!kept.id) {
			free((char *)kept.name);
			continue;
		}
		decl[j] = decl[n_decl];
		decl[n_decl++] = kept;
	}
	n_named = n_decl;
	ci->n_own = (uint32_t)n;
	if (n_decl)
		ht_fields(ag->rec, n_decl, decl);
	rc = 0;
out:
	for (size_t i = 0; i < n_named; i++)
		free((char *)decl[i].name);
	free(decl);
	free(own_index);
	(*jv)->Deallocate(jv, (unsigned char *)fields);
	if (rc < 0) {
		free(ci->own_fields);
		ci->own_fields = NULL;
	}
	return rc;
}

/*
 * The JVMTI field index of a field of class C: the fields of every
 * interface C implements (its superclasses' included) come first, then the
 * fields of java.lang.Object, of each superclass down to C, and of C, each
 * class's in GetClassFields order (JVMTI specification, "Field Index").
 */
static int layout_instance(struct agent *ag, JNIEnv *jni, jclass k,
			   struct class_info *ci)
{
	jvmtiEnv *jv = ag->jvmti;
	struct class_list chain = {0}, ifs = {0};
	uint32_t before = 0, total = 0, own = 0;
	int rc = -1;

	for (jclass c = k; c; c = (*jni)->GetSuperclass(jni, c))
		if (list_add(&chain, c) < 0)
			goto out;
	for (size_t i = 0; i < chain.n; i++)
		if (add_interfaces(jv, jni, chain.v[i], &ifs) < 0)
			goto out;
	for (size_t i = 0; i < ifs.n; i++) {
		jint n = field_count(jv, ifs.v[i]);

		if (n < 0)
			goto out;
		before += (uint32_t)n;
	}
	for (size_t i = 0; i < chain.n; i++) {
		jint n = field_count(jv, chain.v[i]);

		if (n < 0)
			goto out;
		total += (uint32_t)n;
		if (i == 0)
			own = (uint32_t)n;
	}
	ci->slot_of = malloc((total ? total : 1) * sizeof(*ci->slot_of));
	ci->slot_field = malloc((total ? total : 1) * sizeof(*ci->slot_field));
	if (ag->opt.values)
		ci->value_of = calloc(total ? total : 1, sizeof(*ci->value_of));
	if (!ci->slot_of || !ci->slot_field ||
	    (ag->opt.values && !ci->value_of))
		goto out;
	ci->first_index = before;
	/* an interface's count starts after its superinterfaces' fields,
	 * a class's after its interfaces' and superclasses' */
	ci->own_first_index = before + total - own;
	for (size_t i = chain.n; i-- > 0;)
		if (layout_fields(ag, chain.v[i], ci, total) < 0)
			goto out;
	rc = 0;
out:
	free(chain.v);
	free(ifs.v);
	return rc;
}

/* ---- the table ----------------------------------------------------------- */

static struct class_info *add_entry(struct class_table *t, jlong tag)
{
	struct class_info *ci;

	if (ALLOC_GROW(t->v, t->n + 1, t->cap) < 0)
		return NULL;
	if (idmap_put(&t->by_tag, (uint64_t)tag, (uint32_t)t->n) < 0)
		return NULL;
	ci = &t->v[t->n++];
	memset(ci, 0, sizeof(*ci));
	ci->tag = (ht_id)tag;
	return ci;
}

/* The classes of java.lang.ref whose referent is held less than
 * strongly, and Reference, which declares it. */
static void note_reference_class(struct agent *ag, struct class_info *ci,
				 const char *name)
{
	static const char *const strengths[] = {
		"SoftReference", "WeakReference", "FinalReference",
		"PhantomReference",
	};

	if (strcmp(name, "Reference") == 0)
		ag->classes.reference_class = ci->tag;
	for (uint8_t i = 0; i < 4; i++)
		if (strcmp(name, strengths[i]) == 0)
			ci->referent_kind = (uint8_t)(HT_FIELD_SOFT + i);
}

/* Names the class in the trace and sets its kind; 0 or -1. */
static int describe(struct agent *ag, jclass k, struct class_info *ci)
{
	jvmtiEnv *jv = ag->jvmti;
	char *sig = NULL, *name;

	if ((*jv)->GetClassSignature(jv, k, &sig, NULL) != JVMTI_ERROR_NONE)
		return -1;
	if (sig[0] == '[')
		ci->kind = sig[1] == 'L' || sig[1] == '[' ?
			CLASS_OBJECT_ARRAY : CLASS_PRIMITIVE_ARRAY;
	else
		ci->kind = CLASS_INSTANCE;
	name = java_type_name(sig);
	(*jv)->Deallocate(jv, (unsigned char *)sig);
	if (!name)
		return -1;
	if (strcmp(name, "java.lang.Class") == 0)
		ag->classes.class_class = ci->tag;
	else if (strncmp(name, "java.lang.ref.", 14) == 0)
		note_reference_class(ag, ci, name + 14);
	ht_class(ag->rec, ci->tag, name, false, 0);
	free(name);
	return 0;
}

static bool is_prepared(jvmtiEnv *jv, jclass k)
{
	jint status = 0;

	return (*jv)->GetClassStatus(jv, k, &status) == JVMTI_ERROR_NONE &&
	       (status & (JVMTI_CLASS_STATUS_PREPARED |
			  JVMTI_CLASS_STATUS_ARRAY |
			  JVMTI_CLASS_STATUS_PRIMITIVE));
}

/* A class whose fields are not laid out yet (it was not prepared when it
 * was first seen) is looked at again: it has no instances before then. */
static bool needs_layout(const struct class_info *ci)
{
	return ci->kind == CLASS_INSTANCE && !ci->slot_of;
}

/* A subclass of a strength class holds its referent as strongly, through
 * the same synthetic field. */
static void inherit_strength(struct agent *ag, jclass super,
			     struct class_info *ci)
{
	const struct class_info *s = super ? entry_of(ag, super) : NULL;

	if (s && s->referent_kind && !ci->referent_kind) {
		ci->referent_kind = s->referent_kind;
		ci->strength_field = s->strength_field;
	}
}

/*
 * Declares the fields of k (entry at) and lays it out. Its superclasses
 * are learnt first, so that their fields have ids for k's slots; learning
 * them may move the table.
 */
static void learn_layout(struct agent *ag, JNIEnv *jni, jclass k, uint32_t at)
{
	jclass super = (*jni)->GetSuperclass(jni, k);
	struct class_info *ci;

	if (super)
		classes_learn(ag, jni, super);
	ci = &ag->classes.v[at];
	inherit_strength(ag, super, ci);
	if (!ci->own_fields)
		declare_fields(ag, k, ci);
	declare_strength(ag, ci);
	if (layout_instance(ag, jni, k, ci) < 0) {
		free(ci->slot_of);
		free(ci->slot_field);
		free(ci->value_of);
		ci->slot_of = NULL;
		ci->slot_field = NULL;
		ci->value_of = NULL;
		ci->n_fields = ci->n_slots = 0;
	}
}

jlong classes_learn(struct agent *ag, JNIEnv *jni, jclass k)
{
	jvmtiEnv *jv = ag->jvmti;
	struct class_info *ci;
	jlong tag = 0;
	uint32_t i;

	if ((*jv)->GetTag(jv, k, &tag) != JVMTI_ERROR_NONE)
		return 0;
	if (tag == 0) {
		tag = agent_new_tag(ag);
		if ((*jv)->SetTag(jv, k, tag) != JVMTI_ERROR_NONE)
			return 0;
	}
	if (idmap_get(&ag->classes.by_tag, (uint64_t)tag, &i)) {
		ci = &ag->classes.v[i];
	} else {
		ci = add_entry(&ag->classes, tag);
		if (!ci || describe(ag, k, ci) < 0)
			return ci ? tag : 0;
	}
	if (needs_layout(ci) && is_prepared(jv, k) &&
	    (*jni)->PushLocalFrame(jni, 32) == 0) {
		learn_layout(ag, jni, k, (uint32_t)(ci - ag->classes.v));
		(*jni)->PopLocalFrame(jni, NULL);
	}
	return tag;
}

int classes_sweep(struct agent *ag, JNIEnv *jni)
{
	jvmtiEnv *jv = ag->jvmti;
	jint n = 0;
	jclass *v = NULL;
	int rc = 0;

	classes_declare_links(ag);
	/* GetLoadedClasses makes a local reference per class at once: room
	 * for about as many as last time, and more */
	if ((*jni)->PushLocalFrame(jni, (jint)(ag->classes.n + 4096)) != 0)
		return -1;
	if ((*jv)->GetLoadedClasses(jv, &n, &v) != JVMTI_ERROR_NONE) {
		(*jni)->PopLocalFrame(jni, NULL);
		return -1;
	}
	for (jint i = 0; i < n; i++) {
		jlong tag = 0;
		uint32_t at;

		/* the common case, a class known and laid out: one lookup */
		if ((*jv)->GetTag(jv, v[i], &tag) == JVMTI_ERROR_NONE && tag &&
		    idmap_get(&ag->classes.by_tag, (uint64_t)tag, &at) &&
		    !needs_layout(&ag->classes.v[at])) {
			(*jni)->DeleteLocalRef(jni, v[i]);
			continue;
		}
		if (classes_learn(ag, jni, v[i]) == 0)
			rc = -1;
		(*jni)->DeleteLocalRef(jni, v[i]);
	}
	(*jv)->Deallocate(jv, (unsigned char *)v);
	(*jni)->PopLocalFrame(jni, NULL);
	return rc;
}
