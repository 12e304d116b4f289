#include "agent_answers.hpp"

#include <sys/stat.h>

#include <boost/filesystem/operations.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

constexpr std::uintmax_t kMaxAnswers = 64 * 1024;

}  // namespace

std::string read_kept_answers(const fs::path& file) {
  boost::system::error_code ec;
  if (file.empty() || !fs::is_regular_file(fs::symlink_status(file, ec)) ||
      fs::file_size(file, ec) > kMaxAnswers || ec) {
    return "";
  }
  try {
    return fsnap::read_small_file(file).value_or("");
  } catch (const fsnap::Error&) {
    return "";
  }
}

void write_kept_answers(const fs::path& file, const std::string& text) {
  if (text.size() > kMaxAnswers) {
    throw fsnap::Error(fsnap::ErrorCode::kInvalidArgument,
                       "the answers to keep are over " + std::to_string(kMaxAnswers) + " bytes");
  }
  fs::create_directories(file.parent_path());
  ::chmod(file.parent_path().c_str(), 0700);
  fsnap::write_file_atomically(file, text, 0600);
}

}  // namespace hooks
