/*
 * status.c — a fixture status named in a document back to the enum
 * (judge.h): the reverse of onp_fixture_status_name's table (fixture.c),
 * read through that function so that the names exist once.
 */
#include <string.h>

#include "onnxparity/judge.h"

int onp_fixture_status_from_name(const char *name, onp_fixture_status *out)
{
    for (int s = 0; name && s < ONP_FIXTURE_STATUS_COUNT; s++)
        if (!strcmp(name, onp_fixture_status_name((onp_fixture_status)s))) {
            *out = (onp_fixture_status)s;
            return 0;
        }
    return -1;
}
