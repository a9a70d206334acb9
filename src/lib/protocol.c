/* protocol.c - placeholder, being written. */
#include <heaptrace/trace.h>
