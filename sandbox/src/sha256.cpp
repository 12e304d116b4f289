#include "sandbox/sha256.hpp"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>

namespace sandbox {

std::string sha256_hex(std::string_view text) {
  Poco::SHA2Engine sha(Poco::SHA2Engine::SHA_256);
  sha.update(text.data(), text.size());
  return Poco::DigestEngine::digestToHex(sha.digest());
}

}  // namespace sandbox
