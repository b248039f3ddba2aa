// The module is its header's inline function; SwiftPM needs one source file in a C target.
#include "CPrefetch.h"
