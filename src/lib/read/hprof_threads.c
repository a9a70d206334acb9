/*
 * hprof_threads.c - the names of threads that live in the heap
 * (Thread.name -> String -> its array), chased by the index pass's walk
 * (hprof_index.c): a Thread's INSTANCE_DUMP makes its name String wanted,
 * that String's its array, whose text becomes the thread's name. What
 * lies before what wants it is found by walks again over the bodies, each
 * stopping where the last of what it looks for must lie.
 */
#include "lib/read/hprof_internal.h"

#include "util/utf8.h"

#include <string.h>

/* ---- What is wanted ---------------------------------------------------- */

static struct wanted_string *want_string(struct hprof_source *s, uint64_t id)
{
	uint32_t i;

	if (idmap_get(&s->string_slot, id, &i))
		return &s->strings_wanted[i];
	if (HPROF_GROW(s->strings_wanted,
		       s->n_strings_wanted + 1, s->cap_strings_wanted) < 0 ||
	    idmap_add(&s->string_slot, id, (uint32_t)s->n_strings_wanted) < 0)
		return NULL;
	s->strings_wanted[s->n_strings_wanted] =
		(struct wanted_string){.id = id};
	return &s->strings_wanted[s->n_strings_wanted++];
}

static int want_array(struct hprof_source *s, uint64_t id, uint8_t coder,
		      uint32_t *slot)
{
	if (idmap_get(&s->array_slot, id, slot))
		return 0;
	if (HPROF_GROW(s->arrays_wanted,
		       s->n_arrays_wanted + 1, s->cap_arrays_wanted) < 0 ||
	    idmap_add(&s->array_slot, id, (uint32_t)s->n_arrays_wanted) < 0)
		return -1;
	s->arrays_wanted[s->n_arrays_wanted] =
		(struct wanted_array){.id = id, .coder = coder};
	*slot = (uint32_t)s->n_arrays_wanted++;
	return 0;
}

/* A Thread's INSTANCE_DUMP: its name String is wanted. */
int hprof_chase_thread(struct hprof_source *s, uint64_t at, uint64_t id,
			const struct hclass *c, const uint8_t *data)
{
	struct wanted_string *w;
	uint64_t string;
	uint32_t dummy;

	if (idmap_get(&s->chase_by_thread, id, &dummy))
		return 0;
	string = get_id(s, data + c->thread_name_at);
	if (!string)
		return 0;
	w = want_string(s, string);
	if (!w || HPROF_GROW(s->chases, s->n_chases + 1, s->cap_chases) < 0 ||
	    idmap_add(&s->chase_by_thread, id, (uint32_t)s->n_chases) < 0)
		return -1;
	s->chases[s->n_chases++] = (struct name_chase){
		.thread = id,
		.thread_at = at,
		.string = (uint32_t)(w - s->strings_wanted),
	};
	return 0;
}

/* A String's INSTANCE_DUMP: its value array is wanted if it is. */
int hprof_chase_string(struct hprof_source *s, uint64_t at, uint64_t id,
			const uint8_t *data, uint32_t n, bool late)
{
	struct wanted_string *w;
	uint32_t i, slot;
	uint8_t coder = 0;

	if (!idmap_get(&s->string_slot, id, &i))
		return 0;
	w = &s->strings_wanted[i];
	if (w->found || s->string_value_at < 0 ||
	    (uint64_t)s->string_value_at + s->id_size > n)
		return 0;
	if (s->string_coder_at >= 0 && (uint64_t)s->string_coder_at < n)
		coder = data[s->string_coder_at];
	if (want_array(s, get_id(s, data + s->string_value_at), coder,
		       &slot) < 0)
		return -1;
	w = &s->strings_wanted[i];
	w->found = true;
	w->found_late = late;
	w->at = at;
	w->array = slot;
	w->coder = coder;
	return 0;
}

/*
 * The text of a String's array: a byte[] of Latin-1 (coder 0) or of
 * UTF-16 in the machine's order, little-endian on every JVM platform
 * heaptrace knows (coder 1), or a char[] (before JDK 9), which HPROF
 * writes big-endian (util/utf8.h, utf8_from_units).
 */
static const char *decode_name(struct hprof_source *s, const uint8_t *p,
			       uint32_t n, unsigned type, unsigned coder)
{
	char out[UTF8_REPAIR_BOUND(MAX_THREAD_NAME * 4)];
	enum utf8_units units = type == HPROF_CHAR ? UNITS_UTF16BE :
				coder == 1 ? UNITS_UTF16LE : UNITS_LATIN1;
	size_t len = utf8_from_units(out, p, n, units, MAX_THREAD_NAME, NULL);

	return hprof_text_copy(&s->text, out, len);
}

/* A PRIM_ARRAY_DUMP: the text of a thread's name if it is wanted. */
int hprof_chase_array(struct hprof_source *s, uint64_t at, uint64_t id,
		       unsigned type, uint32_t count)
{
	struct wanted_array *w;
	unsigned width = hprof_type_width(type, s->id_size);
	uint32_t i, keep = count;
	const uint8_t *p;

	if (!idmap_get(&s->array_slot, id, &i) || s->arrays_wanted[i].found)
		return 0;
	if (type != HPROF_BYTE && type != HPROF_CHAR)
		return 0;
	if (keep > MAX_THREAD_NAME * 2)
		keep = MAX_THREAD_NAME * 2;
	p = in_at(&s->in, at + 1 + s->id_size + 9, (size_t)keep * width);
	if (!p)
		return -1;
	w = &s->arrays_wanted[i];
	w->text = decode_name(s, p, keep * width, type, w->coder);
	if (!w->text)
		return -1;
	w->found = true;
	return 0;
}

/* ---- The chase --------------------------------------------------------- */

/* Where String.value and String.coder lie in a String's fields. */
void hprof_find_string_fields(struct hprof_source *s)
{
	struct hclass *c = class_of(s, s->string_class);
	uint64_t at = 0;

	s->string_value_at = -1;
	s->string_coder_at = -1;
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n_fields; i++) {
		const char *name = c->names[i];

		if (name && strcmp(name, "value") == 0 &&
		    hprof_type_is_ref(c->types[i]))
			s->string_value_at = (int64_t)at;
		else if (name && strcmp(name, "coder") == 0 &&
			 c->types[i] == HPROF_BYTE)
			s->string_coder_at = (int64_t)at;
		at += hprof_type_width(c->types[i], s->id_size);
	}
}

/* Walks the intact bodies again up to `limit`, chasing what is wanted. */
static void chase_walk(struct hprof_source *s, uint64_t limit)
{
	struct walk w = {.chase_only = true, .limit = limit};

	for (size_t i = 0; i < s->n_dumps; i++) {
		struct dump *d = &s->dumps[i];

		for (size_t j = 0; j < d->n_segs; j++) {
			const struct segment *seg = &d->segs[j];
			struct body b = {
				.record_at = seg->offset - RECORD_HEADER_LEN,
				.end = seg->offset + seg->length,
			};

			b.claimed_end = b.end;
			if (b.record_at + RECORD_HEADER_LEN >= limit)
				return;
			if (hprof_walk_body(s, d, &b, &w) < 0)
				return;
		}
	}
}

/*
 * A Thread's name String, and that String's array, may lie before it in
 * the file, where the first pass could not know they were wanted. Each
 * further walk stops where the last of what it looks for must lie: a
 * String before the Thread that names it, an array before its String.
 */
static void chase_names(struct hprof_source *s)
{
	uint64_t limit = 0;

	for (size_t i = 0; i < s->n_chases; i++) {
		const struct wanted_string *w =
			&s->strings_wanted[s->chases[i].string];

		if (!w->found && s->chases[i].thread_at > limit)
			limit = s->chases[i].thread_at;
	}
	if (limit)
		chase_walk(s, limit);
	/* an array after its String was wanted when the walk passed it,
	 * unless the String itself was only found by the walk above */
	limit = 0;
	for (size_t i = 0; i < s->n_strings_wanted; i++) {
		const struct wanted_string *w = &s->strings_wanted[i];

		if (!w->found || s->arrays_wanted[w->array].found)
			continue;
		if (w->found_late)
			limit = UINT64_MAX;
		else if (w->at > limit)
			limit = w->at;
	}
	if (limit)
		chase_walk(s, limit);
	for (size_t i = 0; i < s->n_chases; i++) {
		const struct wanted_string *w =
			&s->strings_wanted[s->chases[i].string];
		uint32_t t;

		if (!w->found || !s->arrays_wanted[w->array].found)
			continue;
		for (t = 0; t < s->n_threads; t++) {
			struct thread *th = &s->threads[t];

			if (th->object == s->chases[i].thread && !th->name)
				th->name = s->arrays_wanted[w->array].text;
		}
	}
}

void hprof_name_threads(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_threads; i++) {
		struct thread *t = &s->threads[i];

		if (t->name_id && !t->name)
			t->name = hprof_utf8_of(s, t->name_id);
	}
	if (s->n_chases)
		chase_names(s);
}
