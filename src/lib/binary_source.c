/* binary_source.c - placeholder, being written. */
#include <heaptrace/trace.h>
