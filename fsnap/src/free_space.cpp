#include "fsnap/free_space.hpp"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace fsnap {

namespace {

// Below this many bytes free, a filesystem counts as full: a write that failed there
// failed for want of space, whatever else the error says.
constexpr std::uint64_t kNearlyFull = std::uint64_t{1} << 20;

}  // namespace

bool out_of_space(const std::exception& e, const boost::filesystem::path& dir) {
  std::string what = e.what();
  for (int err : {ENOSPC, EDQUOT}) {
    if (what.find(std::strerror(err)) != std::string::npos) return true;
  }
  struct statvfs st {};
  return ::statvfs(dir.c_str(), &st) == 0 &&
         static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize < kNearlyFull;
}

}  // namespace fsnap
