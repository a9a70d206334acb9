/* replay.c - placeholder, being written. */
#include <heaptrace/trace.h>
