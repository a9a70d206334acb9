/*
 * names.c - class and thread names of the Mono profiler. A class is
 * named when it loads, by the runtime once it can (generic arguments
 * included), by Mono's plain getters before and inside pauses.
 */
#include "recorders/mono/mono.h"
#include "util/alloc.h"

#include <mono/metadata/mono-gc.h>

#include <stdlib.h>
#include <string.h>

/* ---- class names --------------------------------------------------------- */

static void append(char *buf, size_t len, size_t *at, const char *s)
{
	while (*s && *at + 1 < len)
		buf[(*at)++] = *s++;
	buf[*at] = '\0';
}

/* Namespace.Outer.Inner, Element[] or Element[,], from Mono's getters
 * only: they read the class and allocate nothing, so this may run inside
 * a pause, and before the runtime can format type names itself. Generic
 * arguments are left out (List`1). */
static void append_class_name(MonoClass *k, char *buf, size_t len, size_t *at,
			      int depth)
{
	int rank = mono_class_get_rank(k);
	MonoClass *outer;
	const char *ns;

	if (rank > 0 && depth < 16) {
		append_class_name(mono_class_get_element_class(k), buf, len, at,
				  depth + 1);
		append(buf, len, at, "[");
		for (int i = 1; i < rank; i++)
			append(buf, len, at, ",");
		append(buf, len, at, "]");
		return;
	}
	outer = mono_class_get_nesting_type(k);
	if (outer && depth < 16) {
		append_class_name(outer, buf, len, at, depth + 1);
		append(buf, len, at, ".");
	} else if ((ns = mono_class_get_namespace(k)) && *ns) {
		append(buf, len, at, ns);
		append(buf, len, at, ".");
	}
	append(buf, len, at, mono_class_get_name(k));
}

const char *plain_class_name(MonoClass *k, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	append_class_name(k, buf, len, &at, 0);
	return buf;
}

static void remember_early(MonoClass *k)
{
	pthread_mutex_lock(&state.early_lock);
	if (ALLOC_GROW(state.early, state.n_early + 1, state.cap_early) == 0)
		state.early[state.n_early++] = k;
	pthread_mutex_unlock(&state.early_lock);
}

/* In a pause, for a class whose load went unseen. */
void name_class_in_pause(MonoClass *k)
{
	ht_id id = (ht_id)(uintptr_t)k;

	if (idset_contains(&state.classes, id))
		return;
	plain_class_name(k, state.class_name, sizeof(state.class_name));
	ht_class(state.trace.rec, id, state.class_name, false, 0);
	idset_add(&state.classes, id, true);
}

/* Outside pauses: the runtime's own name once it can give one (it cannot
 * for every class while the core library is still loading). */
void on_class_loaded(MonoProfiler *prof, MonoClass *k)
{
	char buf[CLASS_NAME_MAX];

	(void)prof;
	if (!enter())
		return;
	if (flag(&state.in_pause)) {
		/* not seen to happen; if it does, nothing that allocates */
		name_class_in_pause(k);
	} else if (flag(&state.runtime_ready)) {
		char *name = mono_type_get_name(mono_class_get_type(k));

		ht_class(state.trace.rec, (ht_id)(uintptr_t)k,
			 name ? name : plain_class_name(k, buf, sizeof(buf)),
			 false, 0);
		mono_free(name);
	} else {
		plain_class_name(k, buf, sizeof(buf));
		ht_class(state.trace.rec, (ht_id)(uintptr_t)k, buf, false, 0);
		if (strchr(buf, '`'))
			remember_early(k);
	}
	if (!flag(&state.in_pause))
		idset_add(&state.classes, (ht_id)(uintptr_t)k, false);
	leave();
}

/* Generic classes loaded early get their arguments now. */
static void rename_early_classes(void)
{
	pthread_mutex_lock(&state.early_lock);
	for (size_t i = 0; i < state.n_early; i++) {
		MonoClass *k = state.early[i];
		char *name = mono_type_get_name(mono_class_get_type(k));

		if (name)
			ht_class(state.trace.rec, (ht_id)(uintptr_t)k, name,
				 false, 0);
		mono_free(name);
	}
	free(state.early);
	state.early = NULL;
	state.n_early = state.cap_early = 0;
	pthread_mutex_unlock(&state.early_lock);
}

void on_thread_name(MonoProfiler *prof, uintptr_t tid, const char *name)
{
	(void)prof;
	if (!name || !enter())
		return;
	ht_thread(state.trace.rec, (ht_id)tid, name);
	leave();
}


void on_runtime_initialized(MonoProfiler *prof)
{
	(void)prof;
	set_flag(&state.runtime_ready, true);
	if (!enter())
		return;
	rename_early_classes();
	find_nursery();
	leave();
}
