/*
 * readfile.h - read a whole (bounded) file into memory, NUL-terminated.
 */
#ifndef READFILE_H
#define READFILE_H

#include <stddef.h>
#include <stdio.h>

#include "../sim/common/fs.h"

/*
 * Open path for reading, refusing anything but a regular file before a
 * byte is read: the open is O_NONBLOCK, so a FIFO (which a plain fopen
 * waits on forever for a writer) or a device returns at once, and the
 * fstat is of the file opened, so nothing can swap it in between. On
 * success *fp is open ("rb") and *size is its length.
 */
enum fs_rc readfile_open(const char *path, FILE **fp, size_t *size,
			 struct fs_err *err);

/*
 * Read path into a malloc'd buffer (*buf, *len; a NUL is appended and not
 * counted). Files over max bytes are FS_EBUDGET, directories and
 * unreadable files FS_EINPUT, with err->file = path. FIFOs, devices and sockets are
 * refused without blocking (readfile_open).
 */
enum fs_rc readfile(const char *path, size_t max, char **buf, size_t *len,
		    struct fs_err *err);

#endif
