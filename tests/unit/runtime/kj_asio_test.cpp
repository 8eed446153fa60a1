// Cap'n Proto's KJ on the asio loop (rpc/kj_asio.hpp): the stream adapter
// moves large buffers both ways through partial reads and writes, promises
// from asio coroutines resolve and reject, and another thread can wake the
// loop through kj::Executor. Top-level promise.wait(ws) drives io.run_one()
// through AsioEventPort::wait(), which is allowed here (test main), never in
// the daemon.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <thread>

#include "rpc/kj_asio.hpp"
#include "runtime/event_loop.hpp"

namespace cuzk::rpc {
namespace {

struct Fixture {
  runtime::EventLoop loop;
  KjOnAsio kj{loop.io()};
  ~Fixture() noexcept {}  // kj::EventLoop's destructor is noexcept(false)
};

bool read_all(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}
bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    ssize_t put = ::write(fd, p, n);
    if (put <= 0) return false;
    p += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

TEST(KjAsio, StreamMovesSixteenMebibytesEachWay) {
  Fixture f;
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  AsioStream::Socket sock(f.loop.io());
  sock.assign(asio::local::stream_protocol(), fds[0]);
  AsioStream stream(std::move(sock));

  constexpr std::size_t kBytes = 16u << 20;  // far above the socket buffer: partial I/O guaranteed
  std::vector<std::uint8_t> out(kBytes);
  std::iota(out.begin(), out.end(), std::uint8_t{7});
  // The peer reads everything, then echoes it back.
  std::thread peer([fd = fds[1]] {
    std::vector<std::uint8_t> buf(kBytes);
    bool ok = read_all(fd, buf.data(), buf.size());
    if (ok) write_all(fd, buf.data(), buf.size());
    ::close(fd);
  });
  // Gather write: three pieces of uneven size.
  kj::ArrayPtr<const kj::byte> pieces[3] = {kj::arrayPtr(out.data(), 1000), kj::arrayPtr(out.data() + 1000, kBytes / 2),
                                            kj::arrayPtr(out.data() + 1000 + kBytes / 2, kBytes - 1000 - kBytes / 2)};
  stream.write(kj::arrayPtr(pieces, 3)).wait(f.kj.ws);
  std::vector<std::uint8_t> in(kBytes + 16);
  std::size_t got = stream.tryRead(in.data(), kBytes, in.size()).wait(f.kj.ws);
  EXPECT_EQ(got, kBytes);
  in.resize(got);
  EXPECT_TRUE(in == out);
  // The peer closed: a read now returns 0 bytes (EOF), not an error.
  EXPECT_EQ(stream.tryRead(in.data(), 1, 1).wait(f.kj.ws), 0u);
  peer.join();
}

asio::awaitable<int> answer_after_timer(asio::io_context& io) {
  asio::steady_timer t(io, std::chrono::milliseconds(5));
  co_await t.async_wait(asio::use_awaitable);
  co_return 42;
}
asio::awaitable<int> fail_on_pool(runtime::WorkerPool& pool) {
  co_return co_await runtime::run_on(pool, []() -> int { throw std::runtime_error("boom on the pool"); });
}

TEST(KjAsio, ToKjResolvesRejectsAndRefusesWhenClosed) {
  Fixture f;
  runtime::WorkerPool pool(1);
  runtime::TaskSet tasks(f.loop.executor());
  EXPECT_EQ(*to_kj(tasks, answer_after_timer(f.loop.io())).wait(f.kj.ws), 42);
  try {
    to_kj(tasks, fail_on_pool(pool)).wait(f.kj.ws);
    ADD_FAILURE() << "expected a rejection";
  } catch (const kj::Exception& e) {
    EXPECT_NE(std::string(e.getDescription().cStr()).find("boom on the pool"), std::string::npos);
  }
  tasks.close();
  EXPECT_THROW(to_kj(tasks, answer_after_timer(f.loop.io())).wait(f.kj.ws), kj::Exception);
  EXPECT_EQ(tasks.size(), 0u);
}

TEST(KjAsio, AnotherThreadWakesTheLoopThroughKjExecutor) {
  Fixture f;
  const kj::Executor& executor = kj::getCurrentThreadExecutor();
  auto paf = kj::newPromiseAndFulfiller<std::thread::id>();
  auto* fulfiller = paf.fulfiller.get();
  std::thread other([&executor, fulfiller] {
    // Runs the lambda on the loop thread and blocks until it has run.
    executor.executeSync([fulfiller] { fulfiller->fulfill(std::this_thread::get_id()); });
  });
  std::thread::id ran_on = paf.promise.wait(f.kj.ws);
  other.join();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

}  // namespace
}  // namespace cuzk::rpc
