/* Euclidean projection onto the simplex {x >= 0, sum x = z}. Internal. */
#ifndef PN_SIMPLEX_H
#define PN_SIMPLEX_H

#include <stddef.h>

/* Non-iterative sort-based projection (Held-Wolfe-Crowder; Wang &
 * Carreira-Perpinan 2013): O(n log n). x may alias v. `scratch` holds n
 * doubles. z > 0. */
void pn_project_simplex(const double *v, double *x, size_t n, double z, double *scratch);

/* The threshold theta of that projection: x = max(v - theta, 0). */
double pn_simplex_threshold(const double *v, size_t n, double z, double *scratch);

#endif
