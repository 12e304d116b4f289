#include "fsnap/user_umask.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstring>

namespace fsnap {

namespace {

// The user's umask once remembered, else -1.
std::atomic<int> g_user_umask{-1};

// The process's umask, read without changing it (umask(2) can only set it, and setting
// it twice races with other threads creating files): Linux shows it in
// /proc/self/status. Where that is not available, set and set back.
mode_t process_umask() {
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned value = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status) != nullptr) {
      found = std::sscanf(line, "Umask: %o", &value) == 1;
    }
    std::fclose(status);
    if (found) return static_cast<mode_t>(value & 0777);
  }
  mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

}  // namespace

void keep_created_files_private() {
  mode_t user = user_umask();
  g_user_umask.store(static_cast<int>(user));
  ::umask(user | 077);
}

mode_t user_umask() {
  int remembered = g_user_umask.load();
  return remembered >= 0 ? static_cast<mode_t>(remembered) : process_umask();
}

}  // namespace fsnap
