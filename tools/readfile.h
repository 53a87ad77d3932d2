/*
 * readfile.h - read a whole (bounded) file into memory, NUL-terminated.
 */
#ifndef READFILE_H
#define READFILE_H

#include <stddef.h>

#include "../sim/fs.h"

/*
 * Read path into a malloc'd buffer (*buf, *len; a NUL is appended and not
 * counted). Files over max bytes, directories and unreadable files are
 * FS_EINPUT with err->file = path.
 */
enum fs_rc readfile(const char *path, size_t max, char **buf, size_t *len,
		    struct fs_err *err);

#endif
