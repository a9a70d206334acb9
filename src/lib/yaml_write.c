/* yaml_write.c - placeholder, being written. */
#include <heaptrace/trace.h>
