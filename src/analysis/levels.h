/*
 * levels.h - reachability levels: how strongly a reference holds its
 * target, their names and how a command spells them. Nothing here needs
 * a graph, so that what only parses or prints a level (the commands'
 * options, cli/parse-options.h) includes no more; what follows or counts
 * references at a level on a dump's graph is in analysis/reach.h.
 */
#ifndef HT_LEVELS_H
#define HT_LEVELS_H

/*
 * How strongly a reference holds its target, from strongest: the order in
 * which the JVM's reference processing clears referents (soft, weak,
 * final, phantom). An analysis at level L follows strong references and
 * the referents of References of strength L or stronger; weak roots are
 * starting points from HEAP_LEVEL_WEAK on; HEAP_LEVEL_PHANTOM follows
 * every reference. HEAP_LEVEL_UNREACHABLE is no level to compute at, only
 * what heap_reach_levels says of an object no level reaches.
 */
enum heap_level {
	HEAP_LEVEL_STRONG = 0,
	HEAP_LEVEL_SOFT,
	HEAP_LEVEL_WEAK,
	HEAP_LEVEL_FINAL,
	HEAP_LEVEL_PHANTOM,
	HEAP_LEVEL_UNREACHABLE,
};
#define HEAP_LEVELS HEAP_LEVEL_UNREACHABLE /* levels to compute at */
#define HEAP_LEVEL_DEFAULT HEAP_LEVEL_STRONG

/* "strong", "soft", "weak", "finalizer", "phantom", "unreachable". */
const char *heap_level_name(enum heap_level level);
/* How Java's documentation says an object is held at that level, the
 * strongest that reaches it: "strongly reachable", "softly reachable",
 * "weakly reachable", "finalizable", "phantom reachable", "unreachable". */
const char *heap_level_reachable(enum heap_level level);
/* A level by its name ("all" is phantom), or -1 when it is none. */
int heap_level_parse(const char *name);

/* The level of a field of this kind (enum ht_field_kind): strong for
 * instance and static fields. */
enum heap_level heap_level_of_field_kind(unsigned kind);

#endif
