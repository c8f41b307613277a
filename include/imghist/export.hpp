// imghist — symbol visibility. The shared libraries are built with hidden visibility: only declarations
// marked IMGHIST_API (the public API in these headers) are exported. A static build exports nothing special.
#pragma once

#if defined(_WIN32)
#define IMGHIST_API
#elif defined(__GNUC__)
#define IMGHIST_API __attribute__((visibility("default")))
#else
#define IMGHIST_API
#endif
