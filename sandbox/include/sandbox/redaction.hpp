// Secret redaction: the values of credential variables (config run.secrets) never
// enter the store — not in ledger records, not in preserved agent data.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace sandbox {

// Values shorter than this are not redacted (they would match ordinary text).
inline constexpr std::size_t kMinSecretLength = 8;

// text with every occurrence of each secret replaced by "[REDACTED]".
std::string redact(std::string text, const std::vector<std::string>& secrets);
// The values of the named environment variables that are set and non-empty.
std::vector<std::string> secret_values(const std::vector<std::string>& names);

}  // namespace sandbox
