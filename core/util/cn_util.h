/* SPDX-License-Identifier: Apache-2.0 */
/* Internal helpers shared by the whole core: thread-local last error,
 * growable strings and string lists.  Not part of the SDK. */
#ifndef CN_UTIL_H
#define CN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <string.h>

#include <codenib/errors.h>

#if defined(__GNUC__)
#define CN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CN_PRINTF(a, b)
#endif

/* ---- errors (cn_error.c) -------------------------------------------------
 * The core API reports detail through a thread-local record; every core
 * function that fails calls cn_error_set() and returns its code. */
int cn_error_set(int code, const char *fmt, ...) CN_PRINTF(2, 3);
int cn_error_setv(int code, const char *fmt, va_list ap);
/* Prefixes the current message with "<prefix>: " keeping the code. */
int cn_error_prefix(const char *fmt, ...) CN_PRINTF(1, 2);
const cn_error *cn_error_last(void);
void cn_error_clear(void);
/* Copies the thread-local error into an explicit record (may be NULL). */
int cn_error_export(cn_error *out);
/* Fills an explicit record (may be NULL) and returns code. */
int cn_error_fill(cn_error *err, int code, const char *fmt, ...) CN_PRINTF(3, 4);
int cn_error_fillv(cn_error *err, int code, const char *fmt, va_list ap);

/* ---- growable string (cn_buf.c) ----------------------------------------- */
typedef struct cn_buf {
    char *data;   /* always NUL-terminated once anything was added */
    size_t len;
    size_t cap;
    bool oom;     /* sticky: an append failed */
} cn_buf;

#define CN_BUF_INIT {NULL, 0, 0, false}

int cn_buf_append(cn_buf *b, const char *s, size_t n);
int cn_buf_puts(cn_buf *b, const char *s);
int cn_buf_putc(cn_buf *b, char c);
int cn_buf_printf(cn_buf *b, const char *fmt, ...) CN_PRINTF(2, 3);
int cn_buf_vprintf(cn_buf *b, const char *fmt, va_list ap);
/* Hands the string over (never NULL on success: "" for an empty buffer). */
char *cn_buf_steal(cn_buf *b);
void cn_buf_reset(cn_buf *b);
void cn_buf_free(cn_buf *b);

/* ---- string list (cn_strv.c) -------------------------------------------- */
typedef struct cn_strv {
    char **items;
    size_t len;
    size_t cap;
} cn_strv;

#define CN_STRV_INIT {NULL, 0, 0}

int cn_strv_push(cn_strv *v, const char *s);        /* copies s */
int cn_strv_push_owned(cn_strv *v, char *s);        /* takes s, frees on failure */
bool cn_strv_contains(const cn_strv *v, const char *s);
/* Splits "a,b, c" on commas, trimming blanks, skipping empty parts. */
int cn_strv_split(cn_strv *v, const char *csv, char sep);
void cn_strv_free(cn_strv *v);

/* ---- misc --------------------------------------------------------------- */
char *cn_strdup(const char *s);           /* NULL-safe: NULL -> NULL */
char *cn_strndup(const char *s, size_t n);
char *cn_path_join(const char *a, const char *b);
/* The canonical path of a repository directory (malloc'd); errors say
 * whether it does not exist or is not a directory. */
int cn_repo_realpath(const char *path, char **out);
bool cn_str_has_suffix(const char *s, const char *suffix);
/* Whether a file name (no directory) names a licence: LICENSE, LICENCE or
 * COPYING, alone, with a variant after '-' or '_' (LICENSE-MIT), after
 * '-' or '_' (ICU-license) or with a text extension (.txt .md .rst .html
 * .htm); COPYING.LIB too.  Case does not matter; a source file such as
 * license.py is none. */
bool cn_is_licence_name(const char *base);
/* Reads a whole file (NUL-terminated).  Errors name the path. */
int cn_file_read(const char *path, size_t max_bytes, char **out, size_t *len);
/* Writes data[0, len) to `path` all or nothing: a temporary file beside
 * it (mode 0644), fsync, rename.  A reader never sees half a file and a
 * crash leaves the old one.  Errors (CN_EIO, CN_ENOMEM) name the path.
 * In a directory under cn_fsync_dir_begin, the fsync is deferred. */
int cn_file_write_atomic(const char *path, const char *data, size_t len);
/* mkdir -p: path and its missing parents (mode 0755); an existing
 * directory is fine.  CN_EIO naming the directory that could not be made. */
int cn_mkdirs(const char *path);

/* Deferred fsync for a directory nothing reads before it is published (a
 * build's): files written directly in `dir` are renamed into place at once
 * and synced on a thread of the directory's own (cn_fsync_defer) while
 * the writers go on; cn_fsync_dir_finish waits for every one and reports
 * the first failure (CN_EIO, naming the file).  Without a thread, begin
 * still succeeds and files are synced as they are written.  CN_ENOMEM. */
int cn_fsync_dir_begin(const char *dir);
/* When the directory holding `path` is under cn_fsync_dir_begin: takes fd
 * over (it is synced and closed later) and returns true; else false, and
 * the caller syncs and closes it. */
bool cn_fsync_defer(int fd, const char *path);
int cn_fsync_dir_finish(const char *dir);
/* printf into a new string; NULL on ENOMEM. */
char *cn_strprintf(const char *fmt, ...) CN_PRINTF(1, 2);

/* ---- processes (cn_proc.c) ---------------------------------------------- */
/* How cn_proc_run runs a helper. */
typedef struct cn_proc_opts {
    char *const *envp;   /* NULL: this process's environment */
    int stdin_fd;        /* -1: /dev/null */
    unsigned timeout_ms; /* 0: none; else the helper's process group is killed then */
    size_t max_bytes;    /* 0: no limit; else more output is an error */
} cn_proc_opts;
/* Runs argv[0] (searched on PATH), stderr on /dev/null, and returns its
 * standard output (NUL-terminated, malloc'd) and exit status (-1 when
 * killed).  CN_ETIMEOUT when it overran (it is then killed). */
int cn_proc_run(char *const argv[], const cn_proc_opts *o, char **out, size_t *len, int *status);
/* Starts argv[0] as cn_proc_run does; *out_fd reads its standard output. */
int cn_proc_spawn(char *const argv[], char *const envp[], int stdin_fd, pid_t *pid, int *out_fd);
/* SIGKILL to the helper; its exit status (-1: killed). */
void cn_proc_kill(pid_t pid);
int cn_proc_wait(pid_t pid);

#endif /* CN_UTIL_H */
