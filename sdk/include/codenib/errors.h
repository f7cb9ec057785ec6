/* SPDX-License-Identifier: Apache-2.0 */
/* codenib SDK: error codes and the error record that crosses the plugin boundary.
 *
 * Every codenib function that can fail returns an int: 0 on success, one of
 * the negative codes below on failure.  The detail goes into a cn_error: a
 * fixed-size record so that no allocation ever crosses the boundary. */
#ifndef CODENIB_ERRORS_H
#define CODENIB_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cn_error_code {
    CN_OK = 0,
    CN_ERR = -1,            /* unclassified failure */
    CN_ENOMEM = -2,         /* out of memory */
    CN_EINVAL = -3,         /* invalid argument or input */
    CN_ENOTFOUND = -4,      /* no such skill, file, symbol, ... */
    CN_EIO = -5,            /* read/write failure */
    CN_EPARSE = -6,         /* malformed YAML, JSON or text */
    CN_EABI = -7,           /* plugin built for an incompatible ABI */
    CN_ELOAD = -8,          /* plugin could not be opened or resolved */
    CN_ETYPE = -9,          /* value does not match the declared type */
    CN_EEXISTS = -10,       /* duplicate id */
    CN_ECONFLICT = -11,     /* name collides with another name */
    CN_EUNSUPPORTED = -12,  /* operation not provided */
    CN_ECANCELED = -13,     /* canceled by the caller */
    CN_ETIMEOUT = -14,      /* time limit reached */
    CN_ECORRUPT = -15,      /* on-disk data failed validation */
    CN_ENETWORK = -16,      /* network or protocol failure */
    CN_ELOCKED = -17,       /* resource held by someone else */
    CN_EAMBIGUOUS = -18,    /* several candidates, none chosen */
    CN_EDENIED = -19,       /* refused: path escapes its root, disabled tool */
    CN_ENOCONTEXT = -20,    /* skill called without the context it needs */
    CN_ESKILL = -21         /* a skill's executor reported failure */
} cn_error_code;

#define CN_ERROR_MESSAGE_MAX 1024

/* Error detail.  `message` is always NUL-terminated and says what went
 * wrong, where, and (when known) what to do about it. */
typedef struct cn_error {
    int code;
    char message[CN_ERROR_MESSAGE_MAX];
} cn_error;

/* Symbolic name of a code ("CN_EINVAL"), for logs and JSON output. */
static inline const char *cn_error_code_name(int code)
{
    switch (code) {
    case CN_OK: return "CN_OK";
    case CN_ERR: return "CN_ERR";
    case CN_ENOMEM: return "CN_ENOMEM";
    case CN_EINVAL: return "CN_EINVAL";
    case CN_ENOTFOUND: return "CN_ENOTFOUND";
    case CN_EIO: return "CN_EIO";
    case CN_EPARSE: return "CN_EPARSE";
    case CN_EABI: return "CN_EABI";
    case CN_ELOAD: return "CN_ELOAD";
    case CN_ETYPE: return "CN_ETYPE";
    case CN_EEXISTS: return "CN_EEXISTS";
    case CN_ECONFLICT: return "CN_ECONFLICT";
    case CN_EUNSUPPORTED: return "CN_EUNSUPPORTED";
    case CN_ECANCELED: return "CN_ECANCELED";
    case CN_ETIMEOUT: return "CN_ETIMEOUT";
    case CN_ECORRUPT: return "CN_ECORRUPT";
    case CN_ENETWORK: return "CN_ENETWORK";
    case CN_ELOCKED: return "CN_ELOCKED";
    case CN_EAMBIGUOUS: return "CN_EAMBIGUOUS";
    case CN_EDENIED: return "CN_EDENIED";
    case CN_ENOCONTEXT: return "CN_ENOCONTEXT";
    case CN_ESKILL: return "CN_ESKILL";
    default: return "CN_UNKNOWN";
    }
}

#ifdef __cplusplus
}
#endif

#endif /* CODENIB_ERRORS_H */
