#include "sandbox/redaction.hpp"

#include <cstdlib>

namespace sandbox {

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  static const std::string kMark = "[REDACTED]";
  for (const std::string& secret : secrets) {
    if (secret.size() < kMinSecretLength) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMark.size())) {
      text.replace(at, secret.size(), kMark);
    }
  }
  return text;
}

std::vector<std::string> secret_values(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') out.emplace_back(value);
  }
  return out;
}

}  // namespace sandbox
