#include "runs/redacting_middleware.hpp"

#include "runs/redaction.hpp"
#include "sandbox/builtin_slices.hpp"

namespace runs {

statekit::Middleware redacting_middleware(std::vector<std::string> secrets) {
  return statekit::typed_middleware<sandbox::ToolInvoked>(
      [secrets = std::move(secrets)](const sandbox::ToolInvoked& event,
                                     const statekit::TypedNext<sandbox::ToolInvoked>& next) {
        sandbox::ToolInvoked clean = event;
        clean.params = redact(std::move(clean.params), secrets);
        clean.result_summary = redact(std::move(clean.result_summary), secrets);
        return next(clean);
      });
}

}  // namespace runs
