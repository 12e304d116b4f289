// shadowbox-hook — the thin hook client. `shadowbox hooks install` writes it into Claude
// Code's settings in place of `shadowbox`: Claude Code starts one hook process per
// event, and this one links nothing but the C and C++ runtimes, so it starts in a
// millisecond where `shadowbox` (libgit2, Poco, Boost) takes some twenty. It hands the
// event to the store's watch daemon, which records it with the workspace watched and
// the store open, and prints the daemon's answer.
//
// Whenever the daemon cannot take the event — none running, one of another build, an
// unusual command line — nothing has been recorded, and it runs the full `shadowbox`
// beside it with the same arguments and the event on stdin (which starts a daemon for
// the next event). If the daemon took the event and then failed, it does not run it
// again: it reports the failure as the full command reports an event it could not
// record (a tool event is blocked).
//
// The wire format is the watch daemon's (fsnap/src/watch_protocol.hpp: a kMessage
// request, a kReply, kRefused or kFailed answer); the message is cli/hook_message.hpp.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../hook_message.hpp"
#include "../version.hpp"

extern char** environ;

namespace {

// The watch daemon's wire (see fsnap/src/watch_protocol.hpp).
constexpr std::string_view kMagic = "SBXW";
constexpr std::uint32_t kProtocol = 2;  // as the daemon's: it refuses any other
constexpr std::uint8_t kOpMessage = 4;
constexpr std::uint8_t kProgress = 1;
constexpr std::uint8_t kRefused = 5;
constexpr std::uint8_t kReply = 6;
constexpr std::uint8_t kFailed = 7;
// The largest request the daemon takes (watch_wire::kMaxRequest); the full command
// records a larger event itself.
constexpr std::size_t kMaxRequest = 68u << 20;
// As long as a hook may take; Claude Code's own hook timeout ends it sooner.
constexpr int kAnswerTimeoutMs = 600'000;

void put_u32(std::string& buf, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) buf.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(std::string_view data) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << (8 * i);
  }
  return v;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool receive_exactly(int fd, char* out, std::size_t n) {
  while (n > 0) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, kAnswerTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t got = ::recv(fd, out, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

std::optional<std::string> receive_frame(int fd) {
  char header[4];
  if (!receive_exactly(fd, header, sizeof header)) return std::nullopt;
  std::uint32_t n = get_u32(std::string_view(header, 4));
  if (n == 0 || n > (256u << 20)) return std::nullopt;
  std::string payload(n, '\0');
  if (!receive_exactly(fd, payload.data(), n)) return std::nullopt;
  return payload;
}

// A string field at the front of data (advancing it); nullopt if there is none.
std::optional<std::string> take_str(std::string_view& data) {
  if (data.size() < 4) return std::nullopt;
  std::uint32_t n = get_u32(data);
  if (data.size() - 4 < n) return std::nullopt;
  std::string out(data.substr(4, n));
  data.remove_prefix(4 + n);
  return out;
}

std::string read_stdin() {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string directory_of_self() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string self(path, static_cast<std::size_t>(n));
  std::size_t slash = self.rfind('/');
  return slash == std::string::npos ? "." : self.substr(0, slash);
}

// The version a daemon of the `shadowbox` beside this program answers to (as
// cli/watch_daemon.cpp computes it from its own executable).
std::string daemon_version(const std::string& shadowbox) {
  std::string version = cli::kVersion;
  struct stat st;
  if (::stat(shadowbox.c_str(), &st) == 0) {
    version += "+" + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
               "." + std::to_string(st.st_size);
  }
  return version;
}

// The value of the global option --store among args (before the command), or "".
std::string store_of(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "hook") return "";
    if (args[i] == "--store") return args[i + 1];
  }
  return "";
}

bool has(const std::vector<std::string>& args, std::string_view arg) {
  for (const std::string& a : args) {
    if (a == arg) return true;
  }
  return false;
}

// The event's hook_event_name, found without a JSON parser ("" if not found): only
// to say which event could not be recorded, and how loudly.
std::string event_name(std::string_view event) {
  std::size_t key = event.find("\"hook_event_name\"");
  if (key == std::string_view::npos) return "";
  std::size_t open = event.find('"', event.find(':', key));
  if (open == std::string_view::npos) return "";
  std::size_t close = event.find('"', open + 1);
  return close == std::string_view::npos ? ""
                                         : std::string(event.substr(open + 1, close - open - 1));
}

// Fails the way the full command fails for an event it cannot record.
[[noreturn]] void fail(const std::string& event, const std::string& why) {
  cli::HookReply reply = cli::unrecorded_reply(event_name(event), why);
  std::fwrite(reply.err.data(), 1, reply.err.size(), stderr);
  std::_Exit(reply.exit_code);
}

// Runs the full command with the same arguments and the event on stdin.
//
// Its write loop and errno messages are its own, not fsnap/posix.hpp's: this program
// links nothing of ours (not even fsnap), so that it starts in about a millisecond.
[[noreturn]] void run_full_command(const std::string& shadowbox,
                                   const std::vector<std::string>& args, const std::string& event) {
  int fd = ::memfd_create("shadowbox-hook-event", 0);
  if (fd < 0) fail(event, "cannot pass the event on: " + std::string(std::strerror(errno)));
  for (std::string_view rest = event; !rest.empty();) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(event, "cannot pass the event on: " + std::string(std::strerror(errno)));
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  ::lseek(fd, 0, SEEK_SET);
  if (::dup2(fd, 0) < 0)
    fail(event, "cannot pass the event on: " + std::string(std::strerror(errno)));
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(shadowbox.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(shadowbox.c_str(), argv.data());
  fail(event, "cannot run " + shadowbox + ": " + std::strerror(errno));
}

// A connection to the watch daemon of store, or -1.
int connect_daemon(const std::string& store) {
  std::string path = store + "/watch.sock";  // fsnap::layout::watch_socket
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return -1;  // the full command reaches it
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string event = read_stdin();
  // Under `shadowbox run` the run's own hooks record every event; hooks from the user's
  // settings stand aside (as `shadowbox hook` does).
  const char* run_home = std::getenv("SHADOWBOX_RUN_HOME");
  if (!has(args, "--run") && run_home != nullptr && *run_home != '\0') return 0;

  std::string shadowbox = directory_of_self() + "/shadowbox";
  std::string store = store_of(args);
  if (store.empty() || store[0] != '/') run_full_command(shadowbox, args, event);
  int fd = connect_daemon(store);
  if (fd < 0) run_full_command(shadowbox, args, event);

  cli::HookMessage message;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) != nullptr) message.cwd = cwd;
  message.args = args;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos) {
      message.env.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
  }
  message.event = event;
  std::string body(kMagic);
  put_u32(body, kProtocol);
  std::string version = daemon_version(shadowbox);
  put_u32(body, static_cast<std::uint32_t>(version.size()));
  body += version;
  body.push_back(static_cast<char>(kOpMessage));
  std::string encoded = cli::encode(message);
  put_u32(body, static_cast<std::uint32_t>(encoded.size()));
  body += encoded;
  if (body.size() > kMaxRequest) run_full_command(shadowbox, args, event);
  std::string frame;
  put_u32(frame, static_cast<std::uint32_t>(body.size()));
  frame += body;
  if (!send_all(fd, frame)) run_full_command(shadowbox, args, event);  // nothing delivered

  for (;;) {
    std::optional<std::string> payload = receive_frame(fd);
    if (!payload) fail(event, "the watch daemon took the event and did not answer");
    std::string_view rest(*payload);
    auto kind = static_cast<std::uint8_t>(rest[0]);
    rest.remove_prefix(1);
    if (kind == kProgress) continue;
    if (kind == kRefused) run_full_command(shadowbox, args, event);
    std::optional<std::string> text = take_str(rest);
    if (kind == kFailed) fail(event, text.value_or("the watch daemon failed"));
    if (kind != kReply || !text) fail(event, "the watch daemon's answer is malformed");
    std::optional<cli::HookReply> reply = cli::decode_reply(*text);
    if (!reply) fail(event, "the watch daemon's answer is malformed");
    if (reply->fall_back) run_full_command(shadowbox, args, event);
    std::fwrite(reply->out.data(), 1, reply->out.size(), stdout);
    std::fwrite(reply->err.data(), 1, reply->err.size(), stderr);
    std::fflush(stdout);
    return reply->exit_code;
  }
}
