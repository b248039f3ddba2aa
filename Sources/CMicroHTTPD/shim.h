#ifndef VIEWPORTD_CMICROHTTPD_SHIM_H
#define VIEWPORTD_CMICROHTTPD_SHIM_H
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <microhttpd.h>
#endif
