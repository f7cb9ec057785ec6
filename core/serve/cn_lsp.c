/* SPDX-License-Identifier: Apache-2.0 */
/* The LSP server (see cn_lsp.h): the lifecycle, and definition,
 * references and workspace symbols answered through the lsp_definition
 * and lsp_references skills. */
#include "cn_lsp.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <codenib/codenib.h>
#include <codenib/index.h>
#include <codenib/lang.h>
#include <codenib/version.h>

#include "../index/cn_index.h"
#include "../index/cn_nodes.h"
#include "../plugin/cn_host.h"
#include "../util/cn_beneath.h"
#include "cn_jsonrpc.h"
#include "cn_served.h"

/* LSP's RequestFailed: a valid request the server could not serve */
#define LSP_REQUEST_FAILED (-32803)
/* The most locations one request answers */
#define MAX_RESULTS 500
/* The skills the server answers with: the only ones it enables */
#define SKILLS "lsp_definition,lsp_references"
/* Files a request reads its lines from are at most this large */
#define MAX_FILE (64u << 20)

struct cn_lsp {
    char *cache_dir, *indexes;          /* the options, copied */
    bool no_compile;
    void (*log)(const char *line, void *data);
    void *log_data;
    cn_served sv;
    bool opened, initialized, shutdown, exited;
    bool utf8;                          /* positions in bytes (agreed at initialize) */
    /* the file whose lines a request reads, kept for the next position */
    char *text_path, *text;
    size_t text_len;
    size_t *line_starts, n_lines;       /* where each of its lines starts */
};

/* Opens the served repository (the skills the server answers with only). */
static int open_served(cn_lsp *s, const char *repo)
{
    cn_served_options so;
    memset(&so, 0, sizeof so);
    so.repo = repo;
    so.cache_dir = s->cache_dir;
    so.indexes = s->indexes;
    so.no_compile = s->no_compile;
    so.log = s->log;
    so.log_data = s->log_data;
    so.skills = SKILLS;
    if (cn_served_open(&s->sv, &so, NULL, 0) < 0) return cn_error_last()->code;
    s->opened = true;
    return 0;
}

int cn_lsp_new(const cn_lsp_options *o, cn_lsp **out)
{
    cn_lsp *s;
    int rc = 0;
    *out = NULL;
    if (o == NULL) return cn_error_set(CN_EINVAL, "the LSP server needs its options");
    if ((s = calloc(1, sizeof *s)) == NULL) return cn_error_set(CN_ENOMEM, "out of memory");
    s->cache_dir = cn_strdup(o->cache_dir);
    s->indexes = cn_strdup(o->indexes);
    s->no_compile = o->no_compile;
    s->log = o->log;
    s->log_data = o->log_data;
    if ((o->cache_dir && !s->cache_dir) || (o->indexes && !s->indexes)) rc = cn_error_set(CN_ENOMEM, "out of memory");
    /* a repository given on the command line is checked before any
     * client talks to the server */
    else if (o->repo != NULL) rc = open_served(s, o->repo);
    if (rc < 0) {
        cn_lsp_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void cn_lsp_free(cn_lsp *s)
{
    if (s == NULL) return;
    if (s->opened) cn_served_close(&s->sv);
    free(s->cache_dir);
    free(s->indexes);
    free(s->text_path);
    free(s->text);
    free(s->line_starts);
    free(s);
}

bool cn_lsp_exited(const cn_lsp *s, int *status)
{
    if (s->exited && status) *status = s->shutdown ? 0 : 1;
    return s->exited;
}

bool cn_lsp_shut_down(const cn_lsp *s)
{
    return s->shutdown;
}

/* ---- lines and positions -------------------------------------------------- */

/* Loads repository file `rel` as the one whose lines are read, with the
 * offset of each line's start (a document's outline reads thousands). */
static bool load_text(cn_lsp *s, const char *rel)
{
    int rootfd;
    size_t n = 1;
    if (s->text_path != NULL && strcmp(s->text_path, rel) == 0) return true;
    free(s->text_path);
    free(s->text);
    free(s->line_starts);
    s->text_path = s->text = NULL;
    s->line_starts = NULL;
    s->text_len = s->n_lines = 0;
    /* beneath the root, following no link (cn_beneath.h) */
    rootfd = open(s->sv.repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0 || cn_read_beneath(rootfd, rel, MAX_FILE, &s->text, &s->text_len) < 0) {
        cn_error_clear();
        if (rootfd >= 0) close(rootfd);
        return false;
    }
    close(rootfd);
    for (const char *p = s->text; (p = memchr(p, '\n', (size_t)(s->text + s->text_len - p))) != NULL; p++) n++;
    if ((s->line_starts = malloc(n * sizeof *s->line_starts)) == NULL || (s->text_path = cn_strdup(rel)) == NULL) {
        free(s->line_starts);
        s->line_starts = NULL;
        return false;
    }
    s->line_starts[s->n_lines++] = 0;
    for (size_t i = 0; i < s->text_len; i++)
        if (s->text[i] == '\n') s->line_starts[s->n_lines++] = i + 1;
    return true;
}

/* Line `line0` (0-based) of repository file `rel`: *text, *len (borrowed
 * until another file is read); false when the file or line is not there. */
static bool line_of(cn_lsp *s, const char *rel, long long line0, const char **text, size_t *len)
{
    size_t start, end;
    if (line0 < 0 || !load_text(s, rel) || (size_t)line0 >= s->n_lines) return false;
    start = s->line_starts[line0];
    end = (size_t)line0 + 1 < s->n_lines ? s->line_starts[line0 + 1] - 1 : s->text_len;
    *text = s->text + start;
    *len = end - start;
    if (*len > 0 && (*text)[*len - 1] == '\r') (*len)--;
    return true;
}

/* The client's column (UTF-16 or bytes) of a byte offset on a line. */
static long long to_client(cn_lsp *s, const char *rel, long long line0, long long byte)
{
    const char *t;
    size_t n;
    if (s->utf8 || !line_of(s, rel, line0, &t, &n)) return byte;
    return (long long)cn_lsp_byte_to_utf16(t, n, (size_t)byte);
}

static long long to_bytes(cn_lsp *s, const char *rel, long long line0, long long col)
{
    const char *t;
    size_t n;
    if (s->utf8 || !line_of(s, rel, line0, &t, &n)) return col;
    return (long long)cn_lsp_utf16_to_byte(t, n, (size_t)col);
}

/* The repository-relative path of a document URI, or NULL when it is not
 * a file of this repository. */
static char *relative_path(const cn_lsp *s, const char *uri)
{
    char *path = cn_lsp_uri_to_path(uri), *real = path ? realpath(path, NULL) : NULL, *rel = NULL;
    /* the file as it resolves; one that does not exist (yet) as written,
     * without a way out of the root */
    const char *p = real ? real : path;
    size_t n = strlen(s->sv.repo);
    if (p != NULL && strncmp(p, s->sv.repo, n) == 0 && p[n] == '/' && p[n + 1] != '\0' &&
        strstr(p + n, "/../") == NULL && !cn_str_has_suffix(p, "/.."))
        rel = cn_strdup(p + n + 1);
    free(path);
    free(real);
    return rel;
}

/* {"start": {line, character}, "end": ...} of a span given in bytes */
static json_object *range_of(cn_lsp *s, const char *rel, long long l0, long long b0, long long l1, long long b1)
{
    json_object *range = json_object_new_object(), *start = json_object_new_object(), *end = json_object_new_object();
    if (range == NULL || start == NULL || end == NULL) {
        json_object_put(range);
        json_object_put(start);
        json_object_put(end);
        return NULL;
    }
    json_object_object_add(start, "line", json_object_new_int64(l0));
    json_object_object_add(start, "character", json_object_new_int64(to_client(s, rel, l0, b0)));
    json_object_object_add(end, "line", json_object_new_int64(l1));
    json_object_object_add(end, "character", json_object_new_int64(to_client(s, rel, l1, b1)));
    json_object_object_add(range, "start", start);
    json_object_object_add(range, "end", end);
    return range;
}

/* {"uri", "range"} for a span on one line, given in bytes. */
static json_object *location(cn_lsp *s, const char *rel, long long line0, long long b0, long long b1)
{
    json_object *loc = json_object_new_object(), *range = range_of(s, rel, line0, b0, line0, b1);
    char *abs = cn_path_join(s->sv.repo, rel), *uri = abs ? cn_lsp_path_to_uri(abs) : NULL;
    if (loc == NULL || range == NULL || uri == NULL) {
        json_object_put(loc);
        json_object_put(range);
        free(abs);
        free(uri);
        return NULL;
    }
    json_object_object_add(loc, "uri", json_object_new_string(uri));
    json_object_object_add(loc, "range", range);
    free(abs);
    free(uri);
    return loc;
}

/* The short name of a qualified name ("pkg/a.py:Pool.get" -> "get"). */
static const char *short_name(const char *qual)
{
    const char *c = strrchr(qual, ':'), *d;
    c = c ? c + 1 : qual;
    d = strrchr(c, '.');
    return d ? d + 1 : c;
}

static bool ident_char(char c)
{
    return c == '_' || isalnum((unsigned char)c);
}

/* Where a definition's name stands on its first line (bytes), the whole
 * line's start when it cannot be found there. */
static void name_span(cn_lsp *s, const char *rel, long long line0, const char *name, long long *b0, long long *b1)
{
    const char *t;
    size_t n, k = strlen(name);
    *b0 = *b1 = 0;
    if (k == 0 || !line_of(s, rel, line0, &t, &n)) return;
    for (size_t i = 0; i + k <= n; i++) {
        if ((i > 0 && ident_char(t[i - 1])) || (i + k < n && ident_char(t[i + k])) || memcmp(t + i, name, k) != 0)
            continue;
        *b0 = (long long)i;
        *b1 = (long long)(i + k);
        return;
    }
}

/* ---- requests ----------------------------------------------------------- */

/* Runs skill `id`; on failure a RequestFailed fault with the reason. */
static int run_skill(cn_lsp *s, const char *id, json_object *args, json_object **res, cn_rpc_fault *f)
{
    int rc;
    if (cn_served_invoke(&s->sv, id, args, res) == 0) return 0;
    rc = cn_error_last()->code == CN_ENOMEM ? CN_ENOMEM
                                            : cn_rpc_fault_set(f, LSP_REQUEST_FAILED, "%s", cn_error_last()->message);
    cn_error_clear();
    return rc;
}

/* The file and position of a TextDocumentPositionParams, as skill
 * arguments (1-based line, byte column).  *args NULL (and 0) when the
 * document is not in this repository. */
static int position_args(cn_lsp *s, json_object *params, json_object **args, cn_rpc_fault *f)
{
    json_object *doc = NULL, *pos = NULL;
    const char *uri;
    long long line, col;
    char *rel;

    *args = NULL;
    json_object_object_get_ex(params, "textDocument", &doc);
    json_object_object_get_ex(params, "position", &pos);
    uri = cn_json_str_member(doc, "uri");
    line = cn_json_int_member(pos, "line", -1);
    col = cn_json_int_member(pos, "character", -1);
    if (uri == NULL || line < 0 || col < 0 || line > INT_MAX || col > INT_MAX)
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS,
                                "expected textDocument.uri and position {line, character} (integers >= 0)");
    if ((rel = relative_path(s, uri)) == NULL) return 0;
    if ((*args = json_object_new_object()) == NULL) {
        free(rel);
        return CN_ENOMEM;
    }
    json_object_object_add(*args, "file_path", json_object_new_string(rel));
    json_object_object_add(*args, "line", json_object_new_int64(line + 1));
    json_object_object_add(*args, "character", json_object_new_int64(to_bytes(s, rel, line, col)));
    free(rel);
    return 0;
}

static json_object *nodes_of(json_object *res)
{
    json_object *n = NULL;
    json_object_object_get_ex(res, "nodes", &n);
    return json_object_is_type(n, json_type_array) ? n : NULL;
}

/* A definition's location: its name on its first line. */
static json_object *definition_location(cn_lsp *s, json_object *node)
{
    const char *file = cn_json_str_member(node, "file"), *qual = cn_json_str_member(node, "node_name");
    long long line0 = cn_json_int_member(node, "start_line", 1) - 1, b0, b1;
    if (file == NULL || qual == NULL) return NULL;
    name_span(s, file, line0, short_name(qual), &b0, &b1);
    return location(s, file, line0, b0, b1);
}

static int definition(cn_lsp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    json_object *args, *res, *nodes, *list;
    int rc = position_args(s, params, &args, f);
    if (rc != 0 || args == NULL) return rc;   /* a document outside the repository: null */
    json_object_object_add(args, "top_k", json_object_new_int(20));
    rc = run_skill(s, "lsp_definition", args, &res, f);
    json_object_put(args);
    if (rc != 0) return rc;
    if ((nodes = nodes_of(res)) == NULL || json_object_array_length(nodes) == 0) {
        json_object_put(res);
        return 0;
    }
    if ((list = json_object_new_array()) == NULL) rc = CN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < json_object_array_length(nodes); i++) {
        json_object *loc = definition_location(s, json_object_array_get_idx(nodes, i));
        if (loc != NULL) json_object_array_add(list, loc);
    }
    json_object_put(res);
    *out = list;
    return rc;
}

static int references(cn_lsp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    json_object *args, *res, *nodes, *ctx = NULL, *decl = NULL, *list;
    int rc = position_args(s, params, &args, f);
    if (rc != 0) return rc;
    if (args == NULL) return (*out = json_object_new_array()) ? 0 : CN_ENOMEM;
    json_object_object_get_ex(params, "context", &ctx);
    json_object_object_get_ex(ctx, "includeDeclaration", &decl);
    json_object_object_add(args, "include_declaration", json_object_new_boolean(json_object_get_boolean(decl)));
    json_object_object_add(args, "top_k", json_object_new_int(MAX_RESULTS));
    rc = run_skill(s, "lsp_references", args, &res, f);
    json_object_put(args);
    if (rc != 0) return rc;
    nodes = nodes_of(res);
    if ((list = json_object_new_array()) == NULL) rc = CN_ENOMEM;
    for (size_t i = 0; rc == 0 && nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i), *loc;
        const char *file = cn_json_str_member(n, "file"), *written = cn_json_str_member(n, "written_as");
        const char *target = cn_json_str_member(n, "target");
        long long line = cn_json_int_member(n, "line", -1), ch = cn_json_int_member(n, "character", -1);
        size_t width = written ? strlen(written) : target ? strlen(short_name(target)) : 0;
        if (file == NULL || line < 1) continue;
        if (ch < 0) {
            /* a use site known by its line only: the whole line's start */
            ch = 0;
            width = 0;
        }
        if ((loc = location(s, file, line - 1, ch, ch + (long long)width)) != NULL) json_object_array_add(list, loc);
    }
    json_object_put(res);
    *out = list;
    return rc;
}

static int symbol_kind(const char *type)
{
    static const struct {
        const char *type;
        int kind;
    } kinds[] = {{"file", 1},  {"module", 2},     {"class", 5},     {"method", 6},    {"enum", 10},
                 {"function", 12}, {"prototype", 12}, {"variable", 13}, {"macro", 14}, {"struct", 23},
                 {"union", 23}, {"typedef", 26}};
    for (size_t i = 0; type && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].type, type) == 0) return kinds[i].kind;
    return 13;
}

static int workspace_symbol(cn_lsp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    const char *q = cn_json_str_member(params, "query");
    json_object *args, *res, *nodes, *list;
    int rc;

    if (q == NULL) return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "workspace/symbol needs params.query (a string)");
    if (q[strspn(q, " \t")] == '\0') return (*out = json_object_new_array()) ? 0 : CN_ENOMEM;
    if ((args = json_object_new_object()) == NULL) return CN_ENOMEM;
    json_object_object_add(args, "symbol", json_object_new_string(q));
    json_object_object_add(args, "top_k", json_object_new_int(100));
    rc = run_skill(s, "lsp_definition", args, &res, f);
    json_object_put(args);
    if (rc != 0) return rc;
    nodes = nodes_of(res);
    if ((list = json_object_new_array()) == NULL) rc = CN_ENOMEM;
    for (size_t i = 0; rc == 0 && nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i), *sym, *loc;
        const char *qual = cn_json_str_member(n, "node_name"), *colon;
        if (qual == NULL || (loc = definition_location(s, n)) == NULL) continue;
        if ((sym = json_object_new_object()) == NULL) {
            json_object_put(loc);
            rc = CN_ENOMEM;
            break;
        }
        json_object_object_add(sym, "name", json_object_new_string(short_name(qual)));
        json_object_object_add(sym, "kind", json_object_new_int(symbol_kind(cn_json_str_member(n, "type"))));
        json_object_object_add(sym, "location", loc);
        /* the class around a method, else the file */
        colon = strrchr(qual, ':');
        if (colon != NULL && strrchr(colon, '.') != NULL)
            json_object_object_add(sym, "containerName",
                                   json_object_new_string_len(colon + 1, (int)(strrchr(colon, '.') - colon - 1)));
        else if (colon != NULL)
            json_object_object_add(sym, "containerName", json_object_new_string_len(qual, (int)(colon - qual)));
        json_object_array_add(list, sym);
    }
    json_object_put(res);
    *out = list;
    return rc;
}

/* A DocumentSymbol: the node's whole lines, its name selected. */
static json_object *document_symbol(cn_lsp *s, const cn_node_info *n)
{
    json_object *sym = json_object_new_object(), *range, *sel, *children = json_object_new_array();
    const char *t;
    size_t len = 0;
    long long b0, b1;
    if (!line_of(s, n->path, n->end_line, &t, &len)) len = 0;
    range = range_of(s, n->path, n->start_line, 0, n->end_line, (long long)len);
    name_span(s, n->path, n->start_line, n->name, &b0, &b1);
    sel = range_of(s, n->path, n->start_line, b0, n->start_line, b1);
    if (sym == NULL || range == NULL || sel == NULL || children == NULL) {
        json_object_put(sym);
        json_object_put(range);
        json_object_put(sel);
        json_object_put(children);
        return NULL;
    }
    json_object_object_add(sym, "name", json_object_new_string(n->name));
    json_object_object_add(sym, "kind", json_object_new_int(symbol_kind(cn_node_kind_name(n->kind))));
    json_object_object_add(sym, "range", range);
    json_object_object_add(sym, "selectionRange", sel);
    json_object_object_add(sym, "children", children);
    return sym;
}

/* The outline of a file: its nodes (a file's nodes follow its file node
 * in the index, each after its parent), nested by parent. */
static int document_symbols(cn_lsp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    const cn_index_services *I = cn_host_index_services();
    json_object *doc = NULL, *top, *by_id;
    const char *uri;
    char *rel;
    uint32_t file_id, count;
    cn_error err;
    int rc = 0;

    json_object_object_get_ex(params, "textDocument", &doc);
    if ((uri = cn_json_str_member(doc, "uri")) == NULL)
        return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "textDocument/documentSymbol needs textDocument.uri");
    if ((rel = relative_path(s, uri)) == NULL) return (*out = json_object_new_array()) ? 0 : CN_ENOMEM;
    if (cn_served_refresh(&s->sv) < 0) {
        rc = cn_rpc_fault_set(f, LSP_REQUEST_FAILED, "%s", cn_error_last()->message);
        cn_error_clear();
    } else if (s->sv.reg->index == NULL) {
        rc = cn_rpc_fault_set(f, LSP_REQUEST_FAILED, "%s has no index to read", s->sv.repo);
    }
    if (rc != 0) {
        free(rel);
        return rc;
    }
    top = json_object_new_array();
    by_id = json_object_new_object();
    if (top == NULL || by_id == NULL) rc = CN_ENOMEM;
    count = I->node_count(s->sv.reg->index);
    if (rc == 0 && I->node_by_qualname(s->sv.reg->index, rel, &file_id, &err) == 0) {
        for (uint32_t id = file_id + 1; rc == 0 && id < count; id++) {
            cn_node_info n;
            json_object *sym, *parent = NULL, *children = NULL;
            char key[16];
            n.struct_size = sizeof n;
            if (I->node(s->sv.reg->index, id, &n, &err) < 0 || strcmp(n.path, rel) != 0) break;
            if (n.kind == CN_NODE_BLOCK) continue;   /* statements, not a symbol */
            if ((sym = document_symbol(s, &n)) == NULL) {
                rc = CN_ENOMEM;
                break;
            }
            snprintf(key, sizeof key, "%lld", (long long)n.parent);
            if (json_object_object_get_ex(by_id, key, &parent)) json_object_object_get_ex(parent, "children", &children);
            json_object_array_add(children ? children : top, sym);
            snprintf(key, sizeof key, "%u", id);
            json_object_object_add(by_id, key, json_object_get(sym));
        }
    }
    json_object_put(by_id);
    free(rel);
    if (rc < 0) {
        json_object_put(top);
        return rc;
    }
    *out = top;
    return 0;
}

/* ---- lifecycle ---------------------------------------------------------- */

/* The repository the client opened: rootUri, rootPath or its first
 * workspace folder. */
static char *client_root(json_object *params)
{
    json_object *folders = NULL;
    const char *uri = cn_json_str_member(params, "rootUri"), *path = cn_json_str_member(params, "rootPath");
    if (uri == NULL && json_object_object_get_ex(params, "workspaceFolders", &folders) &&
        json_object_is_type(folders, json_type_array) && json_object_array_length(folders) > 0)
        uri = cn_json_str_member(json_object_array_get_idx(folders, 0), "uri");
    if (uri != NULL) return cn_lsp_uri_to_path(uri);
    return cn_strdup(path);
}

static bool client_speaks_utf8(json_object *params)
{
    json_object *caps = NULL, *general = NULL, *encodings = NULL;
    json_object_object_get_ex(params, "capabilities", &caps);
    json_object_object_get_ex(caps, "general", &general);
    json_object_object_get_ex(general, "positionEncodings", &encodings);
    for (size_t i = 0; json_object_is_type(encodings, json_type_array) && i < json_object_array_length(encodings); i++) {
        const char *e = json_object_get_string(json_object_array_get_idx(encodings, i));
        if (e && strcmp(e, "utf-8") == 0) return true;
    }
    return false;
}

static int initialize(cn_lsp *s, json_object *params, json_object **out, cn_rpc_fault *f)
{
    json_object *r, *caps, *sync, *info;

    if (s->initialized) return cn_rpc_fault_set(f, CN_RPC_INVALID_REQUEST, "initialize was sent already");
    if (!s->opened) {
        char *root = client_root(params);
        int rc;
        if (root == NULL)
            return cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS,
                                    "no repository: the client sent no rootUri, rootPath or workspace folder "
                                    "(a file:// one), and the server was started without --repo");
        rc = open_served(s, root);
        free(root);
        if (rc < 0) {
            rc = rc == CN_ENOMEM ? CN_ENOMEM : cn_rpc_fault_set(f, CN_RPC_INVALID_PARAMS, "%s", cn_error_last()->message);
            cn_error_clear();
            return rc;
        }
    }
    s->utf8 = client_speaks_utf8(params);
    r = json_object_new_object();
    caps = json_object_new_object();
    sync = json_object_new_object();
    info = json_object_new_object();
    if (r == NULL || caps == NULL || sync == NULL || info == NULL) {
        json_object_put(r);
        json_object_put(caps);
        json_object_put(sync);
        json_object_put(info);
        return CN_ENOMEM;
    }
    /* the files on disk are what the index reads: no buffer is synced */
    json_object_object_add(sync, "openClose", json_object_new_boolean(0));
    json_object_object_add(sync, "change", json_object_new_int(0));
    json_object_object_add(caps, "positionEncoding", json_object_new_string(s->utf8 ? "utf-8" : "utf-16"));
    json_object_object_add(caps, "textDocumentSync", sync);
    json_object_object_add(caps, "definitionProvider", json_object_new_boolean(1));
    json_object_object_add(caps, "referencesProvider", json_object_new_boolean(1));
    json_object_object_add(caps, "workspaceSymbolProvider", json_object_new_boolean(1));
    json_object_object_add(caps, "documentSymbolProvider", json_object_new_boolean(1));
    json_object_object_add(info, "name", json_object_new_string("codenib"));
    json_object_object_add(info, "version", json_object_new_string(CN_VERSION_STRING));
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", info);
    s->initialized = true;
    cn_served_log(&s->sv, "serving %s (positions in %s)", s->sv.repo, s->utf8 ? "UTF-8 bytes" : "UTF-16 units");
    *out = r;
    return 0;
}

static int handler(void *ctx, const char *method, json_object *params, bool notification, json_object **r,
                   cn_rpc_fault *f)
{
    cn_lsp *s = ctx;
    *r = NULL;
    /* a file's lines are read again for each request: it may have changed */
    free(s->text_path);
    s->text_path = NULL;
    if (notification) {
        /* initialized, $/cancelRequest, didOpen/didChange/didSave (the
         * disk is read instead): nothing to do but exit */
        if (strcmp(method, "exit") == 0) s->exited = true;
        return 0;
    }
    if (strcmp(method, "initialize") == 0) return initialize(s, params, r, f);
    if (!s->initialized)
        return cn_rpc_fault_set(f, CN_RPC_SERVER_NOT_INITIALIZED, "'%s' before initialize", method);
    if (s->shutdown) return cn_rpc_fault_set(f, CN_RPC_INVALID_REQUEST, "'%s' after shutdown", method);
    if (strcmp(method, "shutdown") == 0) {
        s->shutdown = true;
        return 0;
    }
    if (strcmp(method, "textDocument/definition") == 0) return definition(s, params, r, f);
    if (strcmp(method, "textDocument/references") == 0) return references(s, params, r, f);
    if (strcmp(method, "workspace/symbol") == 0) return workspace_symbol(s, params, r, f);
    if (strcmp(method, "textDocument/documentSymbol") == 0) return document_symbols(s, params, r, f);
    return cn_rpc_fault_set(f, CN_RPC_METHOD_NOT_FOUND,
                            "method '%s' is not served here (codenib serves textDocument/definition, "
                            "textDocument/references, textDocument/documentSymbol and workspace/symbol)",
                            method);
}

int cn_lsp_handle(cn_lsp *s, const char *msg, size_t len, char **response)
{
    return cn_rpc_handle(msg, len, false, handler, s, response);
}
