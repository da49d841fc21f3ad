/* gcc -O2 libm.c -lm && ./a.out > libm.txt (glibc 2.36), then the lines
   where glibc is not correctly rounded (mpmath at 300 bits) dropped.
   Prints x, glibc's exp(x), log(x) and log2(x) in C's %a, for arguments
   where trec_eval calls them: exp of a mean of logs in [ln 0.00001, 0]
   and log of a value in [0.00001, 1] (geometric means), log2 of a
   discount just above 1 or up to 100 (G). */
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
int main(void) {
    srand48(42);
    for (int i = 0; i < 200; i++) {
        double e = log(0.00001) * drand48();
        double l = (i % 3 == 0) ? (lrand48() % 1000 + 1) / (double) (lrand48() % 1000 + 1000)
                                : 0.00001 + drand48() * (1 - 0.00001);
        double g = (i % 2 == 0) ? 1 + ldexp(lrand48() % 1000 + 1, -(int) (lrand48() % 50))
                                : 1 + 99 * drand48();
        printf("exp %a %a\nlog %a %a\nlog2 %a %a\n", e, exp(e), l, log(l), g, log2(g));
    }
    return 0;
}
