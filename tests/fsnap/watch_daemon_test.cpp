// The watch daemon (watch_daemon.hpp): captures it serves are exactly what a full walk
// captures, whatever happened in between — changes of every kind, the daemon killed at
// any moment, other options, another version — and it goes away when it should.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <git2.h>

#include "fsnap/error.hpp"
#include "fsnap/watch_daemon.hpp"
#include "host_fixture.hpp"
#include "raw_socket.hpp"

namespace fsnap_test {
namespace {

using std::chrono::milliseconds;

constexpr const char* kVersion = "test-1";
using Clock = std::chrono::steady_clock;

std::string le32(std::uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// A status request, framed, as a client sends it (fsnap/src/watch_protocol.hpp).
std::string status_request() {
  std::string body = "SBXW" + le32(1) + le32(std::strlen(kVersion)) + kVersion + "\x02";
  return le32(static_cast<std::uint32_t>(body.size())) + body;
}

// A connection to the daemon's socket for what a client of ours never does: sending
// slowly, partly, nothing, or too much.
using RawClient = testing_support::RawSocket;

class WatchDaemonTest : public HostTest {
 protected:
  ~WatchDaemonTest() override {
    if (daemon_ > 0) {
      ::kill(daemon_, SIGKILL);
      ::waitpid(daemon_, nullptr, 0);
    }
  }

  fsnap::Store store() { return fsnap::Store::open(store_dir_, ws_, true); }
  fs::path socket() const { return store_dir_ / "watch.sock"; }

  // Starts a daemon in a child process; returns once it answers.
  void start_daemon(fsnap::WatchDaemonOptions options = {}) {
    fsnap::Store s = store();
    if (options.version.empty()) options.version = kVersion;
    options.tick = milliseconds(50);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        code = static_cast<int>(fsnap::serve_watch_daemon(s, options));
      } catch (...) {
        code = 100;
      }
      ::_exit(code);
    }
    daemon_ = pid;
    for (int i = 0; i < 500 && !client().status(); ++i)
      std::this_thread::sleep_for(milliseconds(10));
    ASSERT_TRUE(client().status()) << "the daemon never answered";
  }

  // Waits for the daemon to exit; its WatchDaemonExit, or -1 if it is still running
  // after timeout.
  int wait_exit(milliseconds timeout = milliseconds(5000)) {
    for (auto until = std::chrono::steady_clock::now() + timeout;
         std::chrono::steady_clock::now() < until;) {
      int status = 0;
      if (::waitpid(daemon_, &status, WNOHANG) == daemon_) {
        daemon_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return -1;
  }

  fsnap::WatchDaemonClient client(std::string version = kVersion,
                                  milliseconds patience = milliseconds(3000)) {
    fsnap::WatchClientOptions options;
    options.version = std::move(version);
    options.patience = patience;
    options.start_daemon = [this] { ++start_requests_; };
    return fsnap::WatchDaemonClient(store(), std::move(options));
  }

  // A HostFilesystem that asks the daemon for its captures through c.
  fsnap::HostFilesystem served(std::shared_ptr<fsnap::WatchDaemonClient> c,
                               fsnap::CaptureOptions options = {}) {
    return fsnap::HostFilesystem(store(), std::move(options),
                                 fsnap::HostEnv{nullptr, nullptr, nullptr, std::move(c)});
  }

  // The tree a fresh scan with no stat cache captures, into a store of its own.
  std::string full_walk(fsnap::CaptureOptions options = {}) {
    fs::path dir = temp_.path() / ("walk" + std::to_string(walks_++));
    return fsnap::HostFilesystem(fsnap::Store::open(dir, ws_, true), std::move(options))
        .capture_tree();
  }

  void populate() {
    for (int d = 0; d < 10; ++d) {
      for (int f = 0; f < 20; ++f) {
        write("dir" + std::to_string(d) + "/sub/file" + std::to_string(f), std::to_string(d * f));
      }
    }
  }

  pid_t daemon_ = -1;
  int start_requests_ = 0;
  int walks_ = 0;
};

TEST_F(WatchDaemonTest, ServesCapturesThatMatchAFullWalkAndReadOnlyWhatChanged) {
  populate();
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::HostFilesystem fs = served(c);
  EXPECT_EQ(fs.capture_tree(), full_walk());
  EXPECT_EQ(c->last_fallback(), "");

  write("dir3/sub/file7", "changed");
  remove("dir5");
  link("../dir1", "dir0/up");
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(c->last_fallback(), "");
  EXPECT_EQ(cp.tree, full_walk());
  std::optional<fsnap::WatchDaemonStatus> s = c->status();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, daemon_);
  EXPECT_EQ(s->version, kVersion);
  EXPECT_EQ(s->captures, 2u);
  EXPECT_GE(s->watched_directories, 19u);
  EXPECT_GT(s->memory_bytes, 0u);
  // The root's entries, dir0's and dir3's, dir3/sub's: not the other directories.
  EXPECT_LT(s->last_capture_entries, 40u);
}

TEST_F(WatchDaemonTest, WithoutADaemonTheClientAsksForOneAndTheCommandScans) {
  populate();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::HostFilesystem fs = served(c);
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  EXPECT_EQ(c->last_fallback(), "no watch daemon is running");
  EXPECT_EQ(start_requests_, 1);
  EXPECT_FALSE(c->status());
  EXPECT_FALSE(c->stop());
}

TEST_F(WatchDaemonTest, ADaemonOfAnotherVersionIsNotUsedAndExits) {
  populate();
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client("test-2"));
  fsnap::HostFilesystem fs = served(c);
  EXPECT_EQ(fs.capture_tree(), full_walk());
  EXPECT_NE(c->last_fallback().find("test-1"), std::string::npos) << c->last_fallback();
  EXPECT_EQ(start_requests_, 1) << "a daemon of this version is asked for";
  EXPECT_EQ(wait_exit(), static_cast<int>(fsnap::WatchDaemonExit::kReplaced));
}

TEST_F(WatchDaemonTest, StopEndsTheDaemonAndWritesItsStatCache) {
  populate();
  start_daemon();
  ASSERT_TRUE(client().capture({}));
  fs::remove(store_dir_ / "stat-cache");
  EXPECT_TRUE(client().stop());
  EXPECT_EQ(wait_exit(), static_cast<int>(fsnap::WatchDaemonExit::kStopped));
  EXPECT_TRUE(fs::exists(store_dir_ / "stat-cache"));
  EXPECT_FALSE(fs::exists(store_dir_ / "watch.sock"));
  EXPECT_FALSE(client().status());
}

TEST_F(WatchDaemonTest, IdleDaemonExits) {
  fsnap::WatchDaemonOptions options;
  options.idle_exit = milliseconds(300);
  start_daemon(options);
  EXPECT_EQ(wait_exit(), static_cast<int>(fsnap::WatchDaemonExit::kIdle));
}

TEST_F(WatchDaemonTest, DaemonExitsWhenItsWorkspaceIsRemoved) {
  populate();
  start_daemon();
  fs::remove_all(ws_);
  EXPECT_EQ(wait_exit(), static_cast<int>(fsnap::WatchDaemonExit::kGone));
}

TEST_F(WatchDaemonTest, ASecondDaemonDefersToTheFirst) {
  start_daemon();
  fsnap::WatchDaemonOptions options;
  options.version = kVersion;
  options.lock_wait = milliseconds(100);
  EXPECT_EQ(fsnap::serve_watch_daemon(store(), options), fsnap::WatchDaemonExit::kAlreadyRunning);
  EXPECT_TRUE(client().status());
}

TEST_F(WatchDaemonTest, OtherCaptureOptionsAreAdopted) {
  populate();
  write("big.bin", std::string(5000, 'x'));
  write("logs/a.log", "log");
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  EXPECT_EQ(served(c).capture_tree(), full_walk());
  fsnap::CaptureOptions narrow;
  narrow.excludes = {"logs/", "dir2/"};
  narrow.max_file_size = 1000;
  fsnap::HostFilesystem fs = served(c, narrow);
  std::vector<fsnap::Checkpoint> cps = fs.checkpoint_after_outside_changes({}, {});
  EXPECT_EQ(c->last_fallback(), "");
  EXPECT_EQ(cps.back().tree, full_walk(narrow));
  ASSERT_EQ(cps.back().skipped.size(), 1u);
  EXPECT_EQ(cps.back().skipped[0].path, "big.bin");
}

TEST_F(WatchDaemonTest, TheCopyTheDaemonMakesOfAFileOverTheLimitIsNamedAndRestoresIt) {
  write("big.bin", std::string(5000, 'x'));
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::CaptureOptions narrow;
  narrow.max_file_size = 1000;
  fsnap::HostFilesystem fs = served(c, narrow);
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(c->last_fallback(), "") << "the daemon captured";
  ASSERT_EQ(cp.skipped.size(), 1u);
  ASSERT_TRUE(cp.skipped[0].copy) << "the copy's name came over the wire";
  EXPECT_TRUE(fs::exists(store_dir_ / "large-files" / cp.skipped[0].copy->name));
  fs::remove(ws_ / "big.bin");
  EXPECT_TRUE(fs.restore_checkpoint(cp, {}).unrestored.empty());
  EXPECT_EQ(testing_support::read_file(ws_ / "big.bin"), std::string(5000, 'x'));
}

// The kilobytes of pack indexes (*.idx) the process pid holds resident, and how many it
// maps (from /proc/<pid>/smaps).
std::pair<long, int> resident_pack_indexes(pid_t pid) {
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::string line;
  bool in_index = false;
  long kb = 0;
  int mapped = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') < line.find(' ')) {
      in_index = line.size() > 4 && line.compare(line.size() - 4, 4, ".idx") == 0;
      if (in_index) ++mapped;
    } else if (in_index && line.rfind("Rss:", 0) == 0) {
      kb += std::stol(line.substr(4));
    }
  }
  return {kb, mapped};
}

// libgit2 maps a pack's index whole and every lookup touches pages of it: after each
// request it serves, the daemon drops the pages it holds (issue 37: its memory per
// watched file).
TEST_F(WatchDaemonTest, TheDaemonKeepsNoPackIndexPagesBetweenRequests) {
  for (int f = 0; f < 400; ++f)
    write("d" + std::to_string(f % 8) + "/f" + std::to_string(f), std::to_string(f));
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::HostFilesystem fs = served(c);
  fs.checkpoint({});  // the first capture writes one pack
  ASSERT_TRUE(fs::exists(store_dir_ / "repo.git" / "objects" / "pack"));
  write("d3/f3", "changed");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  EXPECT_EQ(c->last_fallback(), "");
  std::pair<long, int> held{-1, 0};
  for (int i = 0; i < 200 && held.first != 0; ++i) {  // it drops them after answering
    std::this_thread::sleep_for(milliseconds(10));
    held = resident_pack_indexes(daemon_);
  }
  EXPECT_GE(held.second, 1) << "the daemon looked objects up in the pack";
  EXPECT_EQ(held.first, 0) << "kB of pack index resident in the daemon";
}

// A prune in another process (gc bumps shadowbox.pruneGeneration) may have deleted
// objects the daemon's stat cache names: the daemon forgets its cache and reads
// everything again.
TEST_F(WatchDaemonTest, APruneElsewhereMakesTheDaemonReadEverythingAgain) {
  populate();
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::HostFilesystem fs = served(c);
  fs.capture_tree();
  fs.capture_tree();
  EXPECT_LT(c->status()->last_capture_entries, 20u);
  {
    git_repository* repo = nullptr;
    ASSERT_EQ(git_repository_open(&repo, (store_dir_ / "repo.git").c_str()), 0);
    git_config* config = nullptr;
    ASSERT_EQ(git_repository_config(&config, repo), 0);
    ASSERT_EQ(git_config_set_int64(config, "shadowbox.pruneGeneration", 41), 0);
    git_config_free(config);
    git_repository_free(repo);
  }
  EXPECT_EQ(fs.capture_tree(), full_walk());
  EXPECT_EQ(c->last_fallback(), "");
  EXPECT_GT(c->status()->last_capture_entries, 200u) << "the whole tree was read again";
}

// Random changes of every kind between captures, with the daemon killed at random
// points — between captures and in the middle of one — and started again: every
// capture, served or scanned, is the full walk's.
TEST_F(WatchDaemonTest, AMessageIsAnsweredByTheHandlerWhichCapturesThroughTheDaemon) {
  write("a.txt", "one");
  fsnap::WatchDaemonOptions options;
  options.on_message = [](std::string_view message,
                          const std::shared_ptr<fsnap::CaptureService>& captures) {
    std::optional<fsnap::CaptureReport> report = captures->capture(fsnap::CaptureOptions{});
    if (message == "fail") throw std::runtime_error("handler failed");
    return std::string(message) + " " + (report ? report->tree : "none");
  };
  start_daemon(options);
  write("b/c.txt", "two");  // written before the message: in the capture
  fsnap::MessageOutcome out = client().message("hello", milliseconds(5000));
  ASSERT_EQ(out.state, fsnap::MessageOutcome::State::kAnswered) << out.why;
  fsnap::HostFilesystem plain(fsnap::Store::open(temp_.path() / "plain", ws_, true), {});
  EXPECT_EQ(out.reply, "hello " + plain.capture_tree());
  EXPECT_EQ(client().status()->captures, 1u);

  fsnap::MessageOutcome failed = client().message("fail", milliseconds(5000));
  EXPECT_EQ(failed.state, fsnap::MessageOutcome::State::kNoAnswer)
      << "a handler that failed part-way must not look undelivered";
  EXPECT_EQ(failed.why, "handler failed");
}

TEST_F(WatchDaemonTest, AMessageNobodyTakesIsNotDelivered) {
  fsnap::MessageOutcome none = client().message("hello", milliseconds(1000));
  EXPECT_EQ(none.state, fsnap::MessageOutcome::State::kNotDelivered);
  EXPECT_EQ(start_requests_, 1) << "a daemon is started for the next message";

  start_daemon();  // no handler
  fsnap::MessageOutcome refused = client().message("hello", milliseconds(1000));
  EXPECT_EQ(refused.state, fsnap::MessageOutcome::State::kNotDelivered);
  EXPECT_NE(refused.why.find("no messages"), std::string::npos) << refused.why;

  fsnap::MessageOutcome other = client("test-2").message("hello", milliseconds(1000));
  EXPECT_EQ(other.state, fsnap::MessageOutcome::State::kNotDelivered);
}

// Any process of the user can connect: a request larger than any real one is refused
// as soon as its length is read, and nothing is held for a request before it comes.
TEST_F(WatchDaemonTest, AnOversizedRequestIsRefusedAtOnceAndNothingIsHeldForItsLength) {
  start_daemon();
  std::uint64_t before = client().status()->memory_bytes;
  RawClient huge(socket());
  ASSERT_TRUE(huge.send(le32(255u << 20)));
  Clock::time_point start = Clock::now();
  RawClient::Received r = huge.receive(milliseconds(1000));
  EXPECT_LT(Clock::now() - start, milliseconds(500));
  EXPECT_TRUE(r.closed);
  ASSERT_GT(r.data.size(), 5u) << "no answer";
  EXPECT_EQ(r.data[4], 5) << "a refusal (kRefused)";
  EXPECT_NE(r.data.find("over the watch daemon's limit"), std::string::npos) << r.data;

  // 60 MiB announced, 4 bytes sent: the daemon answers others, and holds 4 bytes.
  RawClient announced(socket());
  ASSERT_TRUE(announced.send(le32(60u << 20) + "SBXW"));
  std::optional<fsnap::WatchDaemonStatus> s = client(kVersion, milliseconds(1000)).status();
  ASSERT_TRUE(s) << "a client that sends no more holds the daemon up";
  EXPECT_LT(s->memory_bytes, before + (30u << 20));
}

TEST_F(WatchDaemonTest, SlowAndSilentClientsDelayNoOther) {
  fsnap::WatchDaemonOptions options;
  options.on_message = [](std::string_view message, const std::shared_ptr<fsnap::CaptureService>&) {
    return std::string(message);
  };
  start_daemon(options);
  std::vector<std::unique_ptr<RawClient>> silent;
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(std::make_unique<RawClient>(socket()));
    slow.push_back(std::make_unique<RawClient>(socket()));
    ASSERT_TRUE(silent.back()->connected() && slow.back()->connected());
  }
  // A byte of a real request every 100 ms, each (whatever the daemon's wait for one).
  std::string request = status_request();
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (std::size_t i = 0; !done && i < request.size(); ++i) {
      for (auto& c : slow) c->send(request.substr(i, 1));
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  Clock::time_point start = Clock::now();
  fsnap::WatchDaemonClient prompt = client(kVersion, milliseconds(1000));
  EXPECT_TRUE(prompt.status());
  fsnap::MessageOutcome out = prompt.message("hello", milliseconds(1000));
  EXPECT_EQ(out.state, fsnap::MessageOutcome::State::kAnswered) << out.why;
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  done = true;
  trickle.join();
}

TEST_F(WatchDaemonTest, AClientIsDroppedWhenItsWholeRequestIsLate) {
  fsnap::WatchDaemonOptions options;
  options.request_timeout = milliseconds(300);
  start_daemon(options);
  RawClient silent(socket());
  RawClient slow(socket());
  // Every byte comes well within any wait for one; the whole request does not.
  std::string request = status_request();
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (std::size_t i = 0; !done && i < request.size() && slow.send(request.substr(i, 1)); ++i) {
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  Clock::time_point start = Clock::now();
  EXPECT_TRUE(silent.receive(milliseconds(1500)).closed);
  RawClient::Received r = slow.receive(milliseconds(1500));
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.data, "") << "a request that came too late is not answered";
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  done = true;
  trickle.join();
}

TEST_F(WatchDaemonTest, RandomChangesAndKilledDaemonsNeverGiveAStaleCapture) {
  std::mt19937 rng(GTEST_FLAG_GET(random_seed) != 0 ? GTEST_FLAG_GET(random_seed) : 20261125);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  populate();
  start_daemon();
  auto c = std::make_shared<fsnap::WatchDaemonClient>(client());
  fsnap::HostFilesystem fs = served(c);
  int served_count = 0;
  for (int round = 0; round < 60; ++round) {
    for (int k = pick(6); k >= 0; --k) {
      std::string dir = "dir" + std::to_string(pick(12));
      std::string file = dir + "/sub/file" + std::to_string(pick(25));
      switch (pick(7)) {
        case 0:
          write(file, "v" + std::to_string(rng()));
          break;
        case 1:
          remove(file);
          break;
        case 2:
          remove(dir);
          break;
        case 3:
          if (fs::exists(at(dir)) && !fs::exists(at(dir + "-moved"))) {
            fs::rename(at(dir), at(dir + "-moved"));
          }
          break;
        case 4:
          if (fs::is_regular_file(at(file))) ::chmod(at(file).c_str(), pick(2) ? 0755 : 0644);
          break;
        case 5:
          write(dir + "/new/deep/" + std::to_string(pick(5)), "n");
          break;
        default:
          if (!fs::exists(at(dir + "/link")) && fs::exists(at(dir))) link("sub", dir + "/link");
          break;
      }
    }
    bool alive = daemon_ > 0;
    std::thread killer;
    if (alive && pick(8) == 0) {
      // Kill it at a random moment, perhaps while it serves the capture below.
      killer = std::thread([pid = daemon_, delay = pick(3000)] {
        std::this_thread::sleep_for(std::chrono::microseconds(delay));
        ::kill(pid, SIGKILL);
      });
    }
    std::string tree = fs.checkpoint({}).tree;
    if (c->last_fallback().empty()) ++served_count;
    if (killer.joinable()) {
      killer.join();
      ASSERT_GT(wait_exit(), 0);
    }
    ASSERT_EQ(tree, full_walk()) << "round " << round << ", fallback: " << c->last_fallback();
    if (daemon_ < 0 && pick(2) == 0) start_daemon();
  }
  EXPECT_GT(served_count, 20) << "most captures are served";
}

}  // namespace
}  // namespace fsnap_test
