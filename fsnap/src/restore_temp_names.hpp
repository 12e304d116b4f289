// The names a restore gives what it writes before renaming it into place. Private to
// fsnap.
//
// A restore writes each file (and link) to `.shadowbox-tmp-<pid>-<n>` in the directory
// it belongs in — <pid> the restoring process, <n> a counter — and renames it over the
// target, so that a file is either old or new, never half-written. A restore killed
// with SIGKILL leaves the one it was writing. Names of exactly this form are reserved
// in every directory of a workspace: a capture never records them (so no checkpoint
// holds a leftover, and restore never writes one back), and removes those whose
// process is gone.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace fsnap {

// The name of the n-th file a restore by process pid writes.
std::string restore_temp_name(pid_t pid, unsigned n);

// The process whose restore wrote name, if name is exactly a restore_temp_name (decimal
// numbers without sign or leading zero); nullopt for every other name.
std::optional<pid_t> restore_temp_owner(std::string_view name);

// Whether the process pid may still be writing its temporary files: it exists (as far
// as this process can tell) or is this process.
bool restore_may_be_running(pid_t pid);

}  // namespace fsnap
