// fleet::RedisClient against a real redis-server on a loopback port: URLs, replies,
// scripts, and what happens when the server is gone, restarted or silent.
#include "fleet/redis_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

using fleet::RedisClient;
using fleet::RedisEndpoint;
using fleet::RedisReply;
using fleet::RedisScript;
using fsnap::ErrorCode;

TEST(RedisEndpointTest, ParsesHostPortDatabaseAndPassword) {
  RedisEndpoint a = RedisEndpoint::parse("redis://cache.example:6380/3");
  EXPECT_EQ(a.host, "cache.example");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.db, 3);
  EXPECT_EQ(a.password, "");
  RedisEndpoint b = RedisEndpoint::parse("redis://:s3cret@10.0.0.1");
  EXPECT_EQ(b.host, "10.0.0.1");
  EXPECT_EQ(b.port, 6379);
  EXPECT_EQ(b.db, 0);
  EXPECT_EQ(b.password, "s3cret");
  EXPECT_EQ(b.describe(), "10.0.0.1:6379/0");  // never the password
  RedisEndpoint c = RedisEndpoint::parse("redis://[::1]:7000/1");
  EXPECT_EQ(c.host, "::1");
  EXPECT_EQ(c.port, 7000);
  EXPECT_EQ(c.describe(), "[::1]:7000/1");
}

TEST(RedisEndpointTest, RejectsWhatIsNotARedisUrl) {
  for (const char* url : {"http://host:6379", "redis://", "redis://host:port", "redis://host:0",
                          "redis://host:70000", "redis://host/x", "redis://:pw@"}) {
    try {
      RedisEndpoint::parse(url);
      ADD_FAILURE() << url << " was accepted";
    } catch (const fsnap::Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << url;
      EXPECT_NE(std::string(e.what()).find("redis://[:PASSWORD@]HOST[:PORT][/DB]"),
                std::string::npos)
          << e.what();
    }
  }
}

class RedisClientTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  testing_support::RedisServer server_{dir_.path()};
};

TEST_F(RedisClientTest, RunsCommandsAndReadsEveryKindOfReply) {
  RedisClient client(RedisEndpoint::parse(server_.url(2)));
  EXPECT_EQ(client.command({"SET", "k", "v a l"}).as_text(), "OK");
  EXPECT_EQ(client.command({"GET", "k"}).as_text(), "v a l");
  EXPECT_TRUE(client.command({"GET", "missing"}).nil());
  EXPECT_EQ(client.command({"INCRBY", "n", "41"}).as_integer(), 41);
  client.command({"RPUSH", "l", "a", "", "c"});
  RedisReply list = client.command({"LRANGE", "l", "0", "-1"});
  ASSERT_EQ(list.kind, RedisReply::Kind::kArray);
  ASSERT_EQ(list.elements.size(), 3u);
  EXPECT_EQ(list.elements[1].as_text(), "");
  // SELECT took effect: database 2 holds the key, database 0 does not.
  EXPECT_EQ(server_.cli({"-n", "2", "GET", "k"}), "v a l\n");
  EXPECT_EQ(server_.cli({"-n", "0", "EXISTS", "k"}), "0\n");
}

TEST_F(RedisClientTest, APipelineAnswersEveryCommandInOrder) {
  RedisClient client(RedisEndpoint::parse(server_.url(1)));
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 500; ++i) commands.push_back({"INCRBY", "n", std::to_string(i)});
  commands.push_back({"GET", "n"});
  commands.push_back({"GET", "missing"});
  std::vector<RedisReply> replies = client.pipeline(commands);
  ASSERT_EQ(replies.size(), 502u);
  EXPECT_EQ(replies[0].as_integer(), 0);
  EXPECT_EQ(replies[499].as_integer(), 499 * 500 / 2);
  EXPECT_EQ(replies[500].as_text(), std::to_string(499 * 500 / 2));
  EXPECT_TRUE(replies[501].nil());
  EXPECT_TRUE(client.pipeline({}).empty());
  EXPECT_EQ(server_.cli({"-n", "1", "GET", "n"}), std::to_string(499 * 500 / 2) + "\n");
}

TEST_F(RedisClientTest, AnErrorReplyIsAnErrorNamingTheCommand) {
  RedisClient client(RedisEndpoint::parse(server_.url()));
  client.command({"SET", "k", "text"});
  try {
    client.command({"INCR", "k"});
    FAIL() << "INCR of a text succeeded";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("refused INCR"), std::string::npos) << e.what();
  }
  // The connection is still in step.
  EXPECT_EQ(client.command({"GET", "k"}).as_text(), "text");
}

TEST_F(RedisClientTest, ScriptsLoadThemselvesAgainAfterARestart) {
  RedisClient client(RedisEndpoint::parse(server_.url()));
  RedisScript add("return redis.call('INCRBY', KEYS[1], ARGV[1])");
  EXPECT_EQ(client.run(add, {"x"}, {"2"}).as_integer(), 2);
  EXPECT_EQ(client.run(add, {"x"}, {"3"}).as_integer(), 5);
  server_.stop();
  try {
    client.run(add, {"x"}, {"1"});
    FAIL() << "a stopped server answered";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("cannot reach Redis at 127.0.0.1:"), std::string::npos)
        << e.what();
  }
  server_.start();  // empty: no keys, no scripts
  EXPECT_EQ(client.run(add, {"x"}, {"7"}).as_integer(), 7);
}

TEST(RedisClientUnreachableTest, NoServerIsAnIoErrorWithTheAddress) {
  int port = testing_support::free_loopback_port();
  RedisClient client(RedisEndpoint::parse("redis://127.0.0.1:" + std::to_string(port)));
  try {
    client.ping();
    FAIL() << "nothing listens, yet PING succeeded";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

TEST(RedisClientUnreachableTest, ASilentServerTimesOut) {
  // Accepts connections (the kernel's backlog does) and never answers.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  RedisClient client(RedisEndpoint::parse("redis://127.0.0.1:" + std::to_string(ntohs(a.sin_port))),
                     std::chrono::milliseconds(200));
  auto started = std::chrono::steady_clock::now();
  try {
    client.ping();
    FAIL() << "a silent server answered";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("no answer within 200 ms"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ::close(fd);
}

}  // namespace
