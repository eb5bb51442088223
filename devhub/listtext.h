/*
 * listtext: a list item's JSON text made from the stored text of the object,
 * without parsing it into a tree and dumping it again (the devhub's lists
 * spent most of their time there: bench-scale, docs/performance.md "Scale").
 *
 * The stored text is what hstore wrote (jansson's compact dump: no
 * whitespace). As kube-apiserver, items of a built-in list carry no
 * apiVersion/kind (the list does), custom resources keep theirs, set to the
 * served version. listtext_item() appends to `out`:
 *   - strip: the text without its top-level "apiVersion" and "kind" members;
 *   - else: the text unchanged, when its top-level apiVersion and kind are
 *     exactly `api_version` and `kind`.
 * Returns 0, or -EAGAIN (nothing appended) whenever it cannot say that the
 * result equals what a parse and a dump would give: text that is not one
 * compact JSON object, escapes in those two members, a CRD object stored
 * under another version. The caller then takes the parse path. Never reads
 * beyond txt[0..n).
 */
#ifndef KKS_DEVHUB_LISTTEXT_H
#define KKS_DEVHUB_LISTTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "pkg/util/buf.h"

int listtext_item(const char *txt, size_t n, bool strip, const char *api_version, const char *kind,
                  struct buf *out);

#endif
