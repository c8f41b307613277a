// Internal: the core's deliberate internal interface (this directory) is used by the filters library, a
// separate shared library; its functions are exported from libimghist with IMGHIST_INTERNAL so that the
// filters can link them, and nothing else of the core's private code is. These headers are not installed:
// the exported names are not API and may change with any release (the filters are always built together
// with the core they link).
#pragma once

#include "imghist/export.hpp"

#define IMGHIST_INTERNAL IMGHIST_API
