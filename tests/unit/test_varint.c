/* test_varint.c - placeholder, being written. */
#include <criterion/criterion.h>
