#ifndef VIEWPORTD_CHIREDIS_SHIM_H
#define VIEWPORTD_CHIREDIS_SHIM_H
/* hiredis (Debian's libhiredis-dev, 0.14): the synchronous client. Swift does not import C
 * variadic functions, so ViewportRedis uses only the argv forms (redisAppendCommandArgv,
 * redisCommandArgv), which are binary-safe. */
#include <sys/time.h>
#include <hiredis/hiredis.h>

/** REDIS_OK / REDIS_ERR as plain ints (the macros are not imported as constants everywhere). */
static inline int viewport_redis_ok(void) { return REDIS_OK; }
#endif
