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
 *   "user"            $CODENIB_HOME/<kind> (default ~/.codenib/<kind>) */
int cn_search_path(const char *kind, const char *env_var, cn_strv *dirs, cn_strv *labels);

#endif /* CN_SEARCH_PATH_H */
