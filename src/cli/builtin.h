/*
 * builtin.h - the commands of the heaptrace CLI, one builtin-*.c each, and
 * the dispatch table in main.c that names them.
 */
#ifndef HT_BUILTIN_H
#define HT_BUILTIN_H

/* This struct is not an API; it may change from one release to the next. */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_record(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_object(int argc, char **argv);
int cmd_paths(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_waste(int argc, char **argv);
int cmd_sites(int argc, char **argv);

#endif
