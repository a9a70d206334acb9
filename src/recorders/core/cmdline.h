/*
 * cmdline.h - the command line of the process a recorder runs in, for the
 * trace's header (shared by the Mono, CLR and JVM recorders).
 */
#ifndef HT_RECORDERS_CMDLINE_H
#define HT_RECORDERS_CMDLINE_H

/* Its arguments joined by spaces, at most 8 KiB of them; malloc'ed, NULL
 * when /proc cannot be read or memory runs out. */
char *process_command_line(void);

#endif
