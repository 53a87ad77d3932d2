/*
 * tuprofile.h - a builtin profile, validated, for the tests that execute
 * lane maps (include after cmocka.h). NULL for a builtin that does not
 * validate (gfx936-article, on purpose).
 */
#ifndef TUPROFILE_H
#define TUPROFILE_H

#include "../sim/lanemap/lanemap.h"
#include "../lib/profile.h"

static inline struct lanemap *tu_builtin_valid(const char *name)
{
	struct fs_err err;
	struct lm_report rep;
	struct lanemap *lm = profile_builtin(name, &err);

	assert_non_null(lm);
	if (lanemap_validate(lm, &rep) != FS_OK) {
		lanemap_free(lm);
		return NULL;
	}
	return lm;
}

#endif
