#include "restore_temp_names.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <limits>

namespace fsnap {

namespace {

constexpr std::string_view kPrefix = ".shadowbox-tmp-";

// A decimal number without sign or leading zero that fits in max; nullopt otherwise.
std::optional<unsigned long long> decimal(std::string_view digits, unsigned long long max) {
  if (digits.empty() || digits.size() > 20 || (digits[0] == '0' && digits.size() > 1)) {
    return std::nullopt;
  }
  unsigned long long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    unsigned digit = static_cast<unsigned>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace

std::string restore_temp_name(pid_t pid, unsigned n) {
  return std::string(kPrefix) + std::to_string(pid) + "-" + std::to_string(n);
}

std::optional<pid_t> restore_temp_owner(std::string_view name) {
  if (name.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view rest = name.substr(kPrefix.size());
  std::size_t dash = rest.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::optional<unsigned long long> pid = decimal(
      rest.substr(0, dash), static_cast<unsigned long long>(std::numeric_limits<pid_t>::max()));
  std::optional<unsigned long long> n =
      decimal(rest.substr(dash + 1), std::numeric_limits<unsigned>::max());
  if (!pid || !n || *pid == 0) return std::nullopt;
  return static_cast<pid_t>(*pid);
}

bool restore_may_be_running(pid_t pid) {
  if (pid == ::getpid()) return true;
  // EPERM: a process of another user has the id; it cannot be told apart from a
  // restore, so it is taken for one.
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

}  // namespace fsnap
