/* test_yaml.c - placeholder, being written. */
#include <criterion/criterion.h>
