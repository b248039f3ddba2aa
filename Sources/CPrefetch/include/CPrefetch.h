#ifndef VIEWPORTD_CPREFETCH_H
#define VIEWPORTD_CPREFETCH_H
/// Asks the CPU to start loading the cache line holding `address` for a read soon (a hint: no
/// fault, no effect on results). Swift has no prefetch of its own; this inlines into the caller.
static inline void viewportd_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif
