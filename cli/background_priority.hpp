// The priority of a process nobody waits for: a detached maintenance packs and merges
// on the same cores and disk as the tool boundaries of the run that started it, and a
// boundary that waits for a core or a read behind it is what makes a run's slowest
// boundaries slow.
#pragma once

namespace cli {

// Lowers this process's CPU priority to the lowest (nice 19) and its I/O priority to the
// lowest of the best-effort class (which, unlike the idle class, still gets the disk on
// a disk that is never idle). Best effort: what cannot be lowered stays as it is.
void use_background_priority();

}  // namespace cli
