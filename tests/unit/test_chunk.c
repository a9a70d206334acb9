/* test_chunk.c - placeholder, being written. */
#include <criterion/criterion.h>
