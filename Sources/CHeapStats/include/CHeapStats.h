#ifndef VIEWPORTD_CHEAPSTATS_H
#define VIEWPORTD_CHEAPSTATS_H
#include <stddef.h>
/// Bytes currently allocated through malloc (glibc mallinfo2: in-use chunks plus mmapped blocks).
size_t viewportd_heap_in_use(void);
#endif
