// IdSource — the random identifiers of shadowbox (checkpoint, snapshot and session
// ids) from one generator: seeded, equal seeds give equal ids (replays, tests);
// unseeded, it draws its seed from the system's entropy.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace fsnap {

// A thread-safe generator of random identifiers.
class IdSource {
 public:
  // Seeded with seed, or from the system's entropy when it is not given.
  explicit IdSource(std::optional<std::uint64_t> seed = std::nullopt);

  // The next 64 random bits.
  std::uint64_t next();
  // digits lowercase hex digits (at most 64).
  std::string hex(std::size_t digits);

  // A process-wide unseeded source, for objects that were given none.
  static std::shared_ptr<IdSource> shared_random();

 private:
  std::mutex mutex_;
  std::mt19937_64 rng_;
};

}  // namespace fsnap
