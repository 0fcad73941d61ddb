/* fuzz-memo: a seeded mutation fuzzer (work in progress). */
#include <glib.h>

int main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  return 0;
}
