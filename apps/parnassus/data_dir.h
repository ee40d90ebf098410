/* Where the command line finds the data it ships (the reference statistics
 * of `parnassus evaluate`, docs/evaluate.md). */
#ifndef PARNASSUS_CLI_DATA_DIR_H
#define PARNASSUS_CLI_DATA_DIR_H

#include <stddef.h>

/* Looks for the data file `relative` (e.g. "reference/chorales-major.json")
 * in, in this order: the directory named by $PARNASSUS_DATA_DIR; the
 * installed data directory found from the executable's own location
 * (BINDIR/../share/parnassus); the source tree's data/ directory the program
 * was built from. Returns 0 and the first path that can be opened in path,
 * or -1 with the places tried, separated by ", ", in tried. */
int pn_cli_find_data(const char *relative, char *path, size_t size, char *tried, size_t tried_size);

#endif
