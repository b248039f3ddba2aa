#include "CHeapStats.h"
#include <malloc.h>
#include <stdatomic.h>

size_t viewportd_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/* Counts malloc calls: viewport-bench's malloc interposes glibc's for the whole process (the
 * executable's definition wins symbol resolution), so every library's allocations are counted.
 * calloc, realloc and posix_memalign go to glibc uncounted (Swift allocates with malloc). */
extern void *__libc_malloc(size_t size);
static atomic_size_t malloc_calls;

void *malloc(size_t size) {
    atomic_fetch_add_explicit(&malloc_calls, 1, memory_order_relaxed);
    return __libc_malloc(size);
}

size_t viewportd_malloc_calls(void) {
    return atomic_load_explicit(&malloc_calls, memory_order_relaxed);
}
