/* SPDX-License-Identifier: Apache-2.0 */
/* The search path shared by skills and backend plugins. */
#ifndef CN_SEARCH_PATH_H
#define CN_SEARCH_PATH_H

#include "../util/cn_util.h"

/* Fills parallel lists of directories and labels, in search order:
 *   "build tree"      <builddir>/_<kind>, only when running from the build tree
 *   <env_var>         each entry of the colon-separated variable
 *   "installed (relocated)"  <prefix of the executable>/lib/codenib/<kind>,
 *                     when the executable is not in the configured bindir
 *   "installed"       $(pkglibdir)/<kind>
 *                     (the two installed entries are left out when
 *                     CODENIB_IGNORE_SYSTEM_DIRS is set to anything but
 *                     "" or "0": `make check` sets it, so an installed
 *                     codenib in the same prefix does not leak into the
 *                     tests)
 *   "user"            $CODENIB_HOME/<kind> (default ~/.codenib/<kind>) */
int cn_search_path(const char *kind, const char *env_var, cn_strv *dirs, cn_strv *labels);

/* Calls add(data, dir, source) for each subdirectory of root that holds a
 * file named `marker` (plugin.yaml, config.yaml), in name order; hidden
 * entries are skipped.  A missing root is not an error; an unreadable one
 * is (CN_EIO).  Stops at the
 * first negative return of add and passes it back; positive returns
 * ("not mine") are ignored. */
int cn_search_path_scan(const char *root, const char *marker, const char *source,
                        int (*add)(void *data, const char *dir, const char *source), void *data);

/* cn_search_path_scan of every directory of the "plugins" search path
 * (CODENIB_PLUGINS_PATH) for packages with a plugin.yaml, each directory's
 * label as source. */
int cn_search_path_scan_plugins(int (*add)(void *data, const char *dir, const char *source),
                                void *data);

#endif /* CN_SEARCH_PATH_H */
