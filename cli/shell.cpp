#include "shell.hpp"

#include <stdexcept>

#include <boost/filesystem/operations.hpp>

namespace cli {

std::string self_path() {
  boost::system::error_code ec;
  boost::filesystem::path p = boost::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the shadowbox executable: " + ec.message());
  return p.string();
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace cli
