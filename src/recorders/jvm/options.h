/*
 * options.h - the option string of the JVMTI agent:
 *
 *   -agentpath:libheaptrace-jvmti.so=dump-on=WHEN,every=N,values,report=FD,output=FILE
 *   jcmd PID JVMTI.agent_load libheaptrace-jvmti.so \
 *        dump-on=WHEN,control=SOCKET,output=FILE
 *
 * Options are KEY=VALUE separated by commas. output takes everything after
 * "output=" to the end of the string, commas included, so that any path
 * can be given: put it last.
 */
#ifndef JVM_OPTIONS_H
#define JVM_OPTIONS_H

#include "recorders/dump_on.h"

#include <stdbool.h>
#include <stddef.h>

/* When to dump, besides at exit and when asked through the JVM (jcmd PID
 * JVMTI.data_dump, SIGQUIT), which every mode does. */
struct agent_options {
	char *output;           /* malloc'ed */
	enum dump_on dump_on;
	unsigned long every;    /* >= 1 */
	bool verbose;           /* a line on stderr per dump */
	/* values: each dump carries primitive fields' values and primitive
	 * arrays' contents (heaptrace record --values) */
	bool values;
	/* Attached (heaptrace record --pid): the Unix socket heaptrace
	 * listens on, which says when to dump and when to stop; malloc'ed,
	 * NULL when not given. */
	char *control;
	/* report=FD: the descriptor of `heaptrace record`'s channel
	 * (recorders/report.h), digits; "" when not given */
	char report[16];
};

#define DEFAULT_OUTPUT "heaptrace.ht"

/* Parses text (NULL or "" for the defaults) into o. 0, or -1 with a
 * message in err. */
int options_parse(const char *text, struct agent_options *o, char *err,
		  size_t errlen);
void options_free(struct agent_options *o);


#endif
