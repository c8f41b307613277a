// The backend of a filter batch (batch_backend.hpp).
#include "core/policy/batch_backend.hpp"

#include "core/checks.hpp"

namespace imghist::detail {

Backend batch_backend(Backend requested, Location location) {
    if (location == Location::Host && requested == Backend::Auto) return Backend::Cpu;
    ImageView probe;
    probe.location = location;
    return resolve_backend(requested, probe);  // its refusals and messages, for the requested backend
}

}  // namespace imghist::detail
