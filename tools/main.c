/* placeholder main until the CLI lands */
#include "adia.h"
#include <stdio.h>
int main(void) { printf("adia %s\n", ADIA_VERSION_STRING); return 0; }
