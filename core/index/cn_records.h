/* The per-file parse records of a build, kept beside its indexes so that
 * the next build re-parses only files whose content or backend changed. */
#ifndef CN_RECORDS_H
#define CN_RECORDS_H

#include <stdbool.h>

#include "cn_filerec.h"
#include "cn_langs.h"

typedef struct cn_records cn_records;

/* Writes the parsed records (with each file's backend version, taken from
 * the opened backends in `langs`). */
int cn_records_write(const cn_file_rec *recs, size_t n, const cn_langs *langs, const char *path);
/* Loads a records file; language names are mapped onto `langs`. */
int cn_records_open(const char *path, const cn_langs *langs, cn_records **out);
/* The record of `path` when its content hash and backend version match. */
const cn_file_rec *cn_records_find(const cn_records *r, const char *path, uint64_t hash,
                                   const char *lang_version);
/* Whether the build had a record for `path` at all. */
bool cn_records_has(const cn_records *r, const char *path);
size_t cn_records_count(const cn_records *r);
void cn_records_close(cn_records *r);

#endif /* CN_RECORDS_H */
