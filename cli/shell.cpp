#include "shell.hpp"

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"

namespace cli {

std::string self_path() {
  boost::system::error_code ec;
  boost::filesystem::path p = boost::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw fsnap::Error(fsnap::ErrorCode::kIo,
                       "cannot find the shadowbox executable: " + ec.message());
  }
  return p.string();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace cli
