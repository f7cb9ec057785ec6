/* SPDX-License-Identifier: Apache-2.0 */
/* The only place that talks to libltdl.  Every call happens under one lock
 * (libltdl keeps global state), and libltdl is initialised on first use and
 * released when the last handle closes. */
#ifndef CN_DL_H
#define CN_DL_H

typedef struct cn_dl cn_dl;

/* Opens a shared object by exact path, with local symbol binding.  Errors
 * name the path and the loader's reason (CN_ELOAD). */
int cn_dl_open(const char *path, cn_dl **out);
/* Looks up a symbol; NULL when absent. */
void *cn_dl_sym(cn_dl *dl, const char *name);
void cn_dl_close(cn_dl *dl);

#endif /* CN_DL_H */
