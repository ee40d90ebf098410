#include "simplex.h"

#include <stdlib.h>
#include <string.h>

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

double pn_simplex_threshold(const double *v, size_t n, double z, double *scratch)
{
    memcpy(scratch, v, n * sizeof *scratch);
    qsort(scratch, n, sizeof *scratch, descending);
    /* theta = (sum of the rho largest - z) / rho for the largest rho whose
     * rho-th value still exceeds it */
    double sum = 0.0, theta = scratch[0] - z;
    for (size_t j = 0; j < n; ++j) {
        sum += scratch[j];
        double t = (sum - z) / (double)(j + 1);
        if (scratch[j] - t > 0.0)
            theta = t;
        else
            break;
    }
    return theta;
}

void pn_project_simplex(const double *v, double *x, size_t n, double z, double *scratch)
{
    double theta = pn_simplex_threshold(v, n, z, scratch);
    for (size_t j = 0; j < n; ++j) {
        double d = v[j] - theta;
        x[j] = d > 0.0 ? d : 0.0;
    }
}
