/* Placeholder main until the runner lands. */
#include <stdio.h>
int main(void) { printf("0 passed, 0 failed\n"); return 0; }
