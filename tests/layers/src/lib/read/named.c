/* named.c - a header named without its folder, and an internal header
 * written as a system one (check-layers.py's fixture). */
#include "reader.h"
#include <lib/common/names.h>
#include <heaptrace/trace.h>
#include <heaptrace/record.h>
