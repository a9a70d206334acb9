/*
 * hprof_names.c - the HPROF reader's event pass before the first dump
 * (hprof_internal.h): a class event per LOAD_CLASS with a name, the
 * fields events (the links, the classes' fields, the synthetic referents
 * of java.lang.ref's strengths), a thread event per named thread and a
 * method event per method (frames of one place).
 */
#include "lib/read/hprof_internal.h"

#include <stdio.h>
#include <string.h>

static bool is_array_name(const char *name)
{
	return name && name[0] == '[';
}

/* The class event of the LOAD_CLASS at `i`; 0 when it has no name. */
static int class_event(struct hprof_source *s, size_t i, struct ht_event *ev)
{
	const struct loaded_class *l = &s->loaded[i];
	const char *internal = hprof_utf8_of(s, l->name_id);
	struct hclass *c;
	const char *name;

	if (!internal)
		return 0;
	name = hprof_java_name(s, internal);
	if (!name)
		return -1;
	start_event(s, ev, HT_EV_CLASS, l->offset);
	ev->u.class_.id = l->class_id;
	ev->u.class_.name = name;
	/* a class whose instances all have one size */
	c = class_of(s, l->class_id);
	if (c && !is_array_name(internal) && l->class_id != s->class_class &&
	    hprof_class_layout(s, c, s->model)) {
		ev->u.class_.has_size = true;
		ev->u.class_.size = c->size[s->model];
	}
	return 1;
}

static int name_put(struct hprof_source *s, size_t *len, const char *text)
{
	size_t n = strlen(text);

	if (HPROF_GROW(s->name_buf, *len + n + 1, s->cap_name_buf) < 0)
		return -1;
	memcpy(s->name_buf + *len, text, n + 1);
	*len += n;
	return 0;
}

/* Where a frame is, as a Java stack trace says it: "(Main.java:12)",
 * "(Main.java)" when the line is not known, "(native)" for a native
 * method; nothing when the dump names no source file. */
static int put_place(struct hprof_source *s, size_t *len,
		     const struct frame *fr)
{
	const char *file = fr->source_file ? hprof_utf8_of(s, fr->source_file)
					   : NULL;
	char line[16];

	if (fr->line == LINE_NATIVE)
		return name_put(s, len, "(native)");
	if (!file || !*file)
		return 0;
	if (name_put(s, len, "(") < 0 || name_put(s, len, file) < 0)
		return -1;
	if (fr->line > 0) {
		snprintf(line, sizeof(line), ":%d", (int)fr->line);
		if (name_put(s, len, line) < 0)
			return -1;
	}
	return name_put(s, len, ")");
}

/* "java.lang.Object.wait(Object.java:338)": the declaring class and the
 * method, as the JVMTI recorder names methods, then where the frame is. */
static const char *method_name(struct hprof_source *s, const struct frame *fr)
{
	const char *cls = NULL, *method = hprof_utf8_of(s, fr->method);
	const char *java_cls = NULL;
	size_t len = 0;
	uint32_t i;

	if (idmap_get(&s->loaded_by_serial, fr->class_serial, &i))
		cls = hprof_utf8_of(s, s->loaded[i].name_id);
	if (cls && !(java_cls = hprof_java_name(s, cls)))
		return NULL;
	if (name_put(s, &len, java_cls ? java_cls : "?") < 0 ||
	    name_put(s, &len, ".") < 0 ||
	    name_put(s, &len, method ? method : "?") < 0 ||
	    put_place(s, &len, fr) < 0)
		return NULL;
	return s->name_buf;
}

/* Fields go out this many to an event, or more when one class has more. */
#define FIELDS_PER_EVENT 256u

/* The reference fields of class c, instance then static, into s->fields
 * from *n on. */
static int class_fields(struct hprof_source *s, const struct hclass *c,
			size_t *n)
{
	uint32_t own = c->first_static - c->first_field, k = 0, v = 0;
	uint64_t offset = 0;

	if (HPROF_GROW(s->fields, *n + own + c->n_static_refs +
				       c->n_own_values + c->n_static_values,
		       s->cap_fields) < 0)
		return -1;
	for (uint32_t i = 0; i < c->n_fields; i++) {
		struct ht_field *f;
		uint64_t at = offset;

		offset += hprof_type_width(c->types[i], s->id_size);
		if (!hprof_type_is_ref(c->types[i])) {
			if (!s->want_values)
				continue;
			/* HPROF numbers its basic types as trace.h does */
			s->fields[(*n)++] = (struct ht_field){
				.id = c->first_value + v++,
				.class_id = c->id,
				.name = c->names[i] ? c->names[i] : "",
				.kind = HT_FIELD_INSTANCE,
				.has_offset = true,
				.offset = at,
				.type = c->types[i],
			};
			continue;
		}
		f = &s->fields[(*n)++];
		/* offset: where the class's own values lie in an
		 * INSTANCE_DUMP, first for an instance of the class itself */
		*f = (struct ht_field){
			.id = c->first_field + k++,
			.class_id = c->id,
			.name = c->names[i] ? c->names[i] : "",
			.kind = HT_FIELD_INSTANCE,
			.has_offset = true,
			.offset = at,
		};
	}
	for (uint32_t i = 0; i < c->n_static_refs; i++) {
		s->fields[(*n)++] = (struct ht_field){
			.id = c->first_static + i,
			.class_id = c->id,
			.name = c->static_names[i] ? c->static_names[i] : "",
			.kind = HT_FIELD_STATIC,
		};
	}
	for (uint32_t i = 0; i < c->n_static_values; i++) {
		struct static_value sv = statics_value(c, i);

		s->fields[(*n)++] = (struct ht_field){
			.id = sv.id,
			.class_id = c->id,
			.name = sv.name ? sv.name : "",
			.kind = HT_FIELD_STATIC,
			.type = sv.type,
		};
	}
	return 0;
}

/*
 * The links, declared by no class, into s->fields from *n on (trace.h:
 * the first field ids of every dump read here). They are the edge from
 * each object to its class, which HPROF leaves implicit in the class id,
 * and those from a class object to what its CLASS_DUMP names. The JVM
 * keeps a class while any instance is alive, and a class loader while any
 * of its classes is; without these edges a class with live instances
 * could be unreachable, and a loader would seem to retain classes that
 * their instances keep. A class holds its superclass loaded too, so
 * <super> is an edge as well, as in Eclipse MAT.
 */
static int link_fields(struct hprof_source *s, size_t *n)
{
	static const char *const names[] = {
		[HT_LINK_ID_CLASS] = HT_LINK_CLASS,
		[HT_LINK_ID_SUPER] = HT_LINK_SUPER,
		[HT_LINK_ID_LOADER] = HT_LINK_LOADER,
		[HT_LINK_ID_SIGNERS] = HT_LINK_SIGNERS,
		[HT_LINK_ID_DOMAIN] = HT_LINK_DOMAIN,
	};

	if (HPROF_GROW(s->fields, *n + HT_LINK_ID_END, s->cap_fields) < 0)
		return -1;
	for (unsigned id = HT_LINK_ID_CLASS; id < HT_LINK_ID_END; id++)
		s->fields[(*n)++] = (struct ht_field){
			.id = id,
			.name = names[id],
			.kind = HT_FIELD_INSTANCE,
		};
	return 0;
}

/* The id of Reference.referent, 0 when the dump has no CLASS_DUMP of
 * java.lang.ref.Reference with that field. */
static uint32_t find_referent_field(struct hprof_source *s)
{
	const struct hclass *r = s->reference_class
		? class_of(s, s->reference_class) : NULL;
	uint32_t k = 0;

	for (uint32_t i = 0; r && i < r->n_fields; i++) {
		if (!hprof_type_is_ref(r->types[i]))
			continue;
		if (r->names[i] && strcmp(r->names[i], "referent") == 0)
			return r->first_field + k;
		k++;
	}
	return 0;
}

/* After the real fields, the synthetic referent of each strength class
 * the dump has a CLASS_DUMP of, where Reference.referent is known: ids
 * after the last real one, into s->fields from *n on. */
static int strength_fields(struct hprof_source *s, size_t *n)
{
	s->strength_declared = true;
	s->referent_field = find_referent_field(s);
	if (!s->referent_field)
		return 0;
	if (HPROF_GROW(s->fields, *n + 4, s->cap_fields) < 0)
		return -1;
	for (uint8_t i = 0; i < 4; i++) {
		if (!s->strength_class[i] ||
		    !class_of(s, s->strength_class[i]) ||
		    s->next_field > UINT32_MAX - 1)
			continue;
		s->strength_field[i] = s->next_field++;
		s->fields[(*n)++] = (struct ht_field){
			.id = s->strength_field[i],
			.class_id = s->strength_class[i],
			.name = "referent",
			.kind = (uint8_t)(HT_FIELD_SOFT + i),
		};
	}
	return 0;
}

/*
 * The next fields event: the links, then the reference fields of the
 * classes with a CLASS_DUMP, in the order they were indexed (and their
 * ids given), then the synthetic referents (strength_fields), before any
 * dump that names them. 1 an event, 0 none left, -1 out of memory.
 */
static int fields_event(struct hprof_source *s, struct ht_event *ev)
{
	size_t n = 0;

	if (!s->links_declared) {
		if (link_fields(s, &n) < 0)
			return -1;
		s->links_declared = true;
	}
	while (s->field_class < s->n_classes && n < FIELDS_PER_EVENT) {
		const struct hclass *c = &s->classes[s->field_class++];

		if (class_fields(s, c, &n) < 0)
			return -1;
	}
	if (s->field_class == s->n_classes && !s->strength_declared &&
	    strength_fields(s, &n) < 0)
		return -1;
	if (n == 0)
		return 0;
	start_event(s, ev, HT_EV_FIELDS, 0);
	ev->u.fields.count = n;
	ev->u.fields.fields = s->fields;
	return 1;
}

/* The names before the first dump: 1 an event, 0 none left, -1 failed. */
int hprof_next_name(struct hprof_source *s, struct ht_event *ev,
		     struct ht_error *err)
{
	while (s->phase == PH_CLASSES && s->cursor < s->n_loaded) {
		int rc = class_event(s, s->cursor++, ev);

		if (rc < 0)
			return hprof_fail(s, err, HT_E_NOMEM, 0, "%s", hprof_nomem_cause());
		if (rc > 0)
			return 1;
	}
	if (s->phase == PH_CLASSES) {
		s->phase = PH_FIELDS;
		s->field_class = 0;
	}
	if (s->phase == PH_FIELDS) {
		int rc = fields_event(s, ev);

		if (rc < 0)
			return hprof_fail(s, err, HT_E_NOMEM, 0, "%s", hprof_nomem_cause());
		if (rc > 0)
			return 1;
		s->phase = PH_THREADS;
		s->cursor = 0;
	}
	while (s->phase == PH_THREADS && s->cursor < s->n_threads) {
		const struct thread *t = &s->threads[s->cursor++];

		if (!t->name)
			continue;
		start_event(s, ev, HT_EV_THREAD, 0);
		ev->u.thread.id = thread_id(t);
		ev->u.thread.name = t->name;
		return 1;
	}
	if (s->phase == PH_THREADS) {
		s->phase = PH_METHODS;
		s->cursor = 0;
	}
	while (s->cursor < s->n_frames) {
		const struct frame *fr = &s->frames[s->cursor++];
		const char *name;

		if (fr->method_id != fr->id)
			continue; /* named with the method's first frame */
		name = method_name(s, fr);
		if (!name)
			return hprof_fail(s, err, HT_E_NOMEM, 0, "%s", hprof_nomem_cause());
		start_event(s, ev, HT_EV_METHOD, 0);
		ev->u.method.id = fr->id;
		ev->u.method.name = name;
		return 1;
	}
	s->phase = PH_DUMP;
	return 0;
}
