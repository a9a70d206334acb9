/* yaml_read.c - placeholder, being written. */
#include <heaptrace/trace.h>
