/* test_codec.c - placeholder, being written. */
#include <criterion/criterion.h>
