/* test_paths.c - placeholder, being written. */
#include <criterion/criterion.h>
