/* test_respfile.c - response files both ways: the text fatlink writes for a
 * command line too long for execve reads back, by the rules GNU tools use,
 * as the same arguments (blanks, quotes, backslashes, empty ones). */
#include "check.h"
#include "lw_base.h"

#include <string.h>

static void round_trip(const char *const *args, size_t n) {
  struct lw_strvec in = {0}, back = {0};
  struct lw_buf text = {0};
  struct lw_diag d = {0};
  CHECK(lw_strvec_push(&in, "/usr/bin/ld") == 0);
  for (size_t i = 0; i < n; i++)
    CHECK(lw_strvec_push(&in, args[i]) == 0);
  CHECK(lw_response_file_text(&in, 1, &text) == 0);
  CHECK(lw_buf_append(&text, "", 1) == 0);
  CHECK(lw_split_args("test", (const char *)text.data, &back, &d) == 0);
  CHECK(back.n == n);
  for (size_t i = 0; i < n && i < back.n; i++)
    CHECK(strcmp(back.v[i], args[i]) == 0);
  lw_strvec_free(&in);
  lw_strvec_free(&back);
  lw_buf_free(&text);
}

int main(void) {
  static const char *const plain[] = {"-o", "a.out", "main.o", "-lc"};
  round_trip(plain, 4);
  static const char *const odd[] = {
      "",           "a b",         "tab\there", "line\nbreak", "it's",
      "\"quoted\"", "back\\slash", "\\",        "'",           "-Map=a map's"};
  round_trip(odd, sizeof odd / sizeof *odd);

  /* What fits execve: a short line does, one string over 128 KiB does not,
   * nor many strings together over the limit. */
  struct lw_strvec v = {0};
  CHECK(lw_strvec_push(&v, "ld") == 0);
  CHECK(lw_args_fit(&v));
  static char big[200 * 1024];
  memset(big, 'x', sizeof big - 1);
  CHECK(lw_strvec_push(&v, big) == 0);
  CHECK(!lw_args_fit(&v));
  lw_strvec_free(&v);
  CHECK(lw_strvec_push(&v, "ld") == 0);
  big[1000] = 0;
  int pushed = 0;
  for (int i = 0; i < 20000; i++)
    pushed += lw_strvec_push(&v, big) == 0;
  CHECK(pushed == 20000);
  CHECK(!lw_args_fit(&v));
  lw_strvec_free(&v);
  return check_report("respfile");
}
