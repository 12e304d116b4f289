#include "fsnap/id_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace fsnap {

namespace {

std::uint64_t entropy_seed() {
  std::random_device device;
  std::seed_seq seq{
      device(), device(), device(), static_cast<unsigned>(::getpid()),
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
  std::uint32_t words[2];
  seq.generate(words, words + 2);
  return (static_cast<std::uint64_t>(words[0]) << 32) | words[1];
}

}  // namespace

IdSource::IdSource(std::optional<std::uint64_t> seed) : rng_(seed ? *seed : entropy_seed()) {}

std::uint64_t IdSource::next() {
  std::lock_guard<std::mutex> lock(mutex_);
  return rng_();
}

std::string IdSource::hex(std::size_t digits) {
  static const char* kDigits = "0123456789abcdef";
  std::string out(std::min<std::size_t>(digits, 64), '0');
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < out.size(); ++i, bits >>= 4) {
    if (i % 16 == 0) bits = next();
    out[i] = kDigits[bits & 15];
  }
  return out;
}

std::shared_ptr<IdSource> IdSource::shared_random() {
  static const std::shared_ptr<IdSource> source = std::make_shared<IdSource>();
  return source;
}

}  // namespace fsnap
