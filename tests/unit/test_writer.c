/* test_writer.c - placeholder, being written. */
#include <criterion/criterion.h>
