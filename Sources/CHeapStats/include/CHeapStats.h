#ifndef VIEWPORTD_CHEAPSTATS_H
#define VIEWPORTD_CHEAPSTATS_H
#include <stddef.h>
/// Bytes currently allocated through malloc (glibc mallinfo2: in-use chunks plus mmapped blocks).
size_t viewportd_heap_in_use(void);
/// Calls to malloc so far in this process (all threads, all libraries).
size_t viewportd_malloc_calls(void);
#endif
