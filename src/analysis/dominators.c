/* dominators.c - placeholder, being written. */
#include "heap.h"
