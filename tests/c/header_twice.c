/* The header compiles as C99 (-pedantic) and as C++, and may be included twice. */
#include "toolnexus.h"
#include "toolnexus.h"

#ifdef __cplusplus
#include <cstdio>
#include <cstring>
#else
#include <stdio.h>
#include <string.h>
#endif

int main(void) {
  tn_callbacks cb;
  memset(&cb, 0, sizeof cb);
  (void)cb;
  if (tn_abi_version() != TN_ABI_VERSION) {
    fprintf(stderr, "ABI %u, header %u: rebuild\n", tn_abi_version(), (unsigned)TN_ABI_VERSION);
    return 1;
  }
  printf("header ok (%s): 1 passed, 0 failed\n", tn_version());
  return 0;
}
