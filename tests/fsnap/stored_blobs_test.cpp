// Large content zlib cannot shrink is stored as it is (deflate's stored blocks), as a
// loose object git reads like any other; content that shrinks is compressed as before;
// what decides is three samples of the file; a half-written object is maintenance's to
// remove.
#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "fsnap/maintenance.hpp"
#include "fsnap/posix.hpp"
#include "host_fixture.hpp"
#include "stored_blobs.hpp"

namespace fsnap_test {
namespace {

constexpr std::size_t kMiB = 1 << 20;
constexpr std::size_t kSample = 64 << 10;  // what resists_compression reads at each place

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::uint64_t v = rng();
    std::memcpy(out.data() + i, &v, 8);
  }
  return out;
}

// size bytes of zeros but for random bytes where resists_compression samples: at the
// start, the middle and the end (and, unless sampled_only, everywhere).
std::string content(std::size_t size, bool sampled_only) {
  std::string out = sampled_only ? std::string(size, '\0') : random_bytes(size, 1);
  for (std::size_t at : {std::size_t{0}, size / 2 - kSample / 2, size - kSample}) {
    out.replace(at, kSample, random_bytes(kSample, at + 2));
  }
  return out;
}

class StoredBlobsTest : public HostTest {
 protected:
  fs::path repo() const { return store_dir_ / "repo.git"; }

  // The size of the loose object of the file at rel in the workspace, which git reads
  // back as the file's content.
  std::uintmax_t loose_size_of(const std::string& rel) {
    testing_support::CommandResult id =
        testing_support::run_command({"git", "hash-object", at(rel)}, temp_.path());
    EXPECT_EQ(id.exit_code, 0) << id.err;
    std::string hex = id.out.substr(0, 40);
    testing_support::CommandResult read = testing_support::run_command(
        {"git", "--git-dir", repo().string(), "cat-file", "blob", hex}, temp_.path());
    EXPECT_EQ(read.exit_code, 0) << read.err;
    EXPECT_TRUE(read.out == testing_support::read_file(ws_ / rel)) << "git reads it back";
    boost::system::error_code ec;
    std::uintmax_t size = fs::file_size(repo() / "objects" / hex.substr(0, 2) / hex.substr(2), ec);
    EXPECT_FALSE(ec) << "a large blob is a loose object";
    return size;
  }

  // Whether resists_compression says so of data.
  bool resists(const std::string& data) {
    fs::path file = temp_.path() / "sample";
    testing_support::write_file(file, data);
    fsnap::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    return fsnap::resists_compression(fd.get(), data.size());
  }
};

TEST_F(StoredBlobsTest, ThreeSamplesDecide) {
  EXPECT_TRUE(resists(content(kMiB, /*sampled_only=*/false)));
  EXPECT_TRUE(resists(content(kMiB, /*sampled_only=*/true))) << "only the samples are read";
  std::string middle_compresses = content(kMiB, false);
  middle_compresses.replace(kMiB / 2 - kSample / 2, kSample, std::string(kSample, 'a'));
  EXPECT_FALSE(resists(middle_compresses));
  std::string text(kMiB, '\0');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = "the quick brown fox\n"[i % 20];
  EXPECT_FALSE(resists(text));
  EXPECT_FALSE(resists(random_bytes(2 * kSample, 3))) << "too small to be sampled";
}

TEST_F(StoredBlobsTest, ALargeFileThatDoesNotCompressIsStoredAsItIsAndComesBack) {
  // Zeros but where it is sampled: what is written shows which way it went (compressed,
  // it would take a few hundred KB).
  write("media/clip.bin", content(20 * kMiB, /*sampled_only=*/true));
  write("media/notes.txt", "small\n");
  fsnap::HostFilesystem host = open();
  fsnap::Checkpoint first = host.checkpoint({});
  EXPECT_GE(loose_size_of("media/clip.bin"), 20 * kMiB);

  Manifest before = manifest();
  write("media/clip.bin", "replaced");
  host.restore_checkpoint(first, {});
  EXPECT_WORKSPACE(before);
  testing_support::CommandResult fsck = testing_support::run_command(
      {"git", "--git-dir", repo().string(), "fsck", "--strict"}, temp_.path());
  EXPECT_EQ(fsck.exit_code, 0) << fsck.err;
}

TEST_F(StoredBlobsTest, ALargeFileThatCompressesIsCompressed) {
  std::string data = content(20 * kMiB, /*sampled_only=*/true);
  data.replace(data.size() - kSample, kSample, std::string(kSample, '\0'));  // its end shrinks
  write("dump.bin", data);
  open().checkpoint({});
  EXPECT_LT(loose_size_of("dump.bin"), 2 * kMiB);
}

TEST_F(StoredBlobsTest, AnObjectLeftHalfWrittenIsRemovedOnceOld) {
  open().checkpoint({});
  fs::path young = repo() / "objects" / (std::string(fsnap::kStoredObjectTempPrefix) + "young1");
  fs::path old = repo() / "objects" / (std::string(fsnap::kStoredObjectTempPrefix) + "old001");
  testing_support::write_file(young, "x");
  testing_support::write_file(old, "x");
  auto then = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() -
                                                   std::chrono::hours(2));
  timeval times[2] = {{then, 0}, {then, 0}};
  ASSERT_EQ(::utimes(old.c_str(), times), 0);
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  std::optional<fsnap::MaintenanceLock> lock = fsnap::MaintenanceLock::acquire(store, true);
  ASSERT_TRUE(lock.has_value());
  EXPECT_EQ(fsnap::remove_abandoned_files(store, std::chrono::hours(1), *lock), 1u);
  EXPECT_TRUE(fs::exists(young));
  EXPECT_FALSE(fs::exists(old));
}

}  // namespace
}  // namespace fsnap_test
