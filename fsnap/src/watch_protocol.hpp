// The watch daemon's wire format and socket plumbing. Private to fsnap.
//
// One connection carries one request and its answer. Every message is a frame: a
// 4-byte little-endian length, then that many bytes of fields — u8, u32 and u64
// little-endian, strings as a u32 length and the bytes.
//
//   request:  "SBXW" u32:protocol str:client-version u8:op [capture options]
//   answers:  u8:kind, then by kind —
//     kProgress  u64:entries-seen u64:files-hashed u64:bytes-hashed   (any number)
//     kCaptured  str:tree u32:n {str:path str:reason u64:size u8:has-copy
//                [str:copy-name u64:copy-mtime-ns (two's complement)]}* u32:n {str:path}*
//                u64:entries-seen u64:files-hashed u64:bytes-hashed
//     kStatus    u64:pid str:version str:workspace u64:uptime-ms u64:idle-ms
//                u64:idle-exit-ms u64:captures u64:watched-dirs u64:rss-bytes
//                u64:last-capture-entries
//     kStopping  (the daemon exits after this answer)
//     kRefused   str:why u8:exiting (the client scans; exiting: the daemon exits now,
//                as one does for a client of another version)
//     kReply     str:reply   (to a kMessage request, whose op is followed by str:message)
//     kFailed    str:why     (the message's handler failed part-way)
//
// Capture options: u32:n {str:exclude}* u64:max-file-size u8:respect-gitignore.
//
// A request frame is at most kMaxRequest bytes: the daemon refuses a larger one
// (kRefused) as soon as its length is read, before it holds any of it, and a client
// must not send one. The largest real request is a hook event carried by the thin
// client: the event itself (at most 64 MiB, as the HTTP hook server takes), the hook's
// environment and arguments (the kernel holds both under ARG_MAX, 2 MiB with the
// default stack limit) and its working directory. A client whose request would be
// larger does the work itself. Answers come from the user's own daemon and may be up
// to kMaxFrame.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"

namespace fsnap::watch_wire {

inline constexpr std::string_view kMagic = "SBXW";
inline constexpr std::uint32_t kProtocol = 2;            // 2: a skipped path's copy
inline constexpr std::uint32_t kMaxRequest = 68u << 20;  // 64 MiB of event + 4 MiB
inline constexpr std::uint32_t kMaxFrame = 256u << 20;

// What a request asks.
enum class Op : std::uint8_t { kCapture = 1, kStatus = 2, kStop = 3, kMessage = 4 };
// What an answer frame is.
enum class Kind : std::uint8_t {
  kProgress = 1,
  kCaptured = 2,
  kStatus = 3,
  kStopping = 4,
  kRefused = 5,
  kReply = 6,
  kFailed = 7
};

// Builds one frame's fields.
class FrameWriter {
 public:
  FrameWriter& u8(std::uint8_t v);
  FrameWriter& u32(std::uint32_t v);
  FrameWriter& u64(std::uint64_t v);
  FrameWriter& str(std::string_view v);
  const std::string& bytes() const { return buf_; }

 private:
  std::string buf_;
};

// Reads one frame's fields; throws Error(kCorrupt) past its end.
class FrameReader {
 public:
  explicit FrameReader(std::string_view data) : data_(data) {}
  std::uint8_t u8();
  std::uint32_t u32();
  std::uint64_t u64();
  std::string str();

 private:
  std::string_view take(std::size_t n);
  std::string_view data_;
};

void put_options(FrameWriter& w, const CaptureOptions& options);
// The options a frame names (with no progress callback).
CaptureOptions get_options(FrameReader& r);
// Whether a and b capture the same things.
bool same_capture(const CaptureOptions& a, const CaptureOptions& b);

// Sends one frame; false if the peer is gone, or (on a non-blocking socket) if it has
// not taken the whole frame within timeout_ms. Never raises SIGPIPE.
bool send_frame(int fd, std::string_view payload, int timeout_ms = 5000);
// Receives one frame, waiting at most timeout_ms for each part of it; false on a
// timeout, an error, a closed connection or a frame over kMaxFrame. (For a client,
// whose daemon reports progress while it works; the daemon reads with FrameReceiver.)
bool receive_frame(int fd, std::string& payload, int timeout_ms);

// Reads one frame from a non-blocking socket as its bytes come, holding no more than
// has come: a frame announced larger than a bound is refused before anything is
// allocated for it.
class FrameReceiver {
 public:
  enum class Result {
    kMore,      // the frame is not all there yet
    kDone,      // payload() is the frame
    kTooLarge,  // announced() is over the bound
    kClosed,    // the peer closed the connection, or it failed, first
  };
  explicit FrameReceiver(std::uint32_t max) : max_(max) {}
  // Reads what fd has now.
  Result read_from(int fd);
  // The frame's length, once its header has come (0 until then).
  std::uint32_t announced() const { return header_got_ == 4 ? size_ : 0; }
  std::string& payload() { return payload_; }

 private:
  std::uint32_t max_;
  char header_[4] = {};
  std::size_t header_got_ = 0;
  std::uint32_t size_ = 0;
  std::string payload_;
};

// A unix stream socket connected to path, or -1 (errno says why). Paths longer than
// sockaddr_un allows are reached through /proc/self/fd.
int connect_socket(const boost::filesystem::path& path);
// A unix stream socket bound to path and listening, or -1 (errno says why). The
// socket file is created 0600 whatever the umask.
int listen_socket(const boost::filesystem::path& path);

}  // namespace fsnap::watch_wire
