// The MPI service loops' idle pause (mpi_link.hpp), without MPI: the pause doubles from 50 µs to
// at most 2 ms and starts again after news; another thread's ring ends a pause at once, and a
// ring that comes before the wait is not lost.
#include <doctest/doctest.h>

#include <thread>

#include "mpi/mpi_link.hpp"

using namespace dptune::host::mpi;
using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST_CASE("mpi backoff: 50 µs doubling to 2 ms, and back to 50 µs after news") {
  Backoff backoff;
  const std::vector<Clock::duration> expected{
      microseconds(50),  microseconds(100),  microseconds(200),  microseconds(400),
      microseconds(800), microseconds(1600), microseconds(2000), microseconds(2000)};
  for (const auto& pause : expected) CHECK(backoff.next() == pause);
  backoff.reset();
  CHECK(backoff.next() == microseconds(50));
}

TEST_CASE("mpi doorbell: a ring ends the pause at once, none lets it run its length") {
  Doorbell bell;
  // Not rung: the whole pause passes (at least its length; the clock is monotonic).
  auto start = Clock::now();
  CHECK_FALSE(bell.wait(milliseconds(30)));
  CHECK(Clock::now() - start >= milliseconds(30));
  // Rung before the wait: kept, and the wait returns at once (a bound far below the 10 s pause
  // that holds on a loaded machine).
  bell.ring();
  start = Clock::now();
  CHECK(bell.wait(std::chrono::seconds(10)));
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  // Rung from another thread during a long pause.
  start = Clock::now();
  std::thread ringer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    bell.ring();
  });
  CHECK(bell.wait(std::chrono::seconds(10)));
  ringer.join();
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  // The ring was cleared by the wait that took it.
  CHECK_FALSE(bell.wait(milliseconds(1)));
}

TEST_CASE("mpi doorbell: an idle turn pauses by the backoff, news or a ring resets it") {
  Doorbell bell;
  Backoff backoff;
  bell.pause_if_idle(true, backoff);  // 50 µs, not rung
  bell.pause_if_idle(true, backoff);  // 100 µs
  CHECK(backoff.next() == microseconds(200));
  bell.pause_if_idle(false, backoff);  // a message arrived: no pause, the backoff starts again
  CHECK(backoff.next() == microseconds(50));
  bell.ring();
  bell.pause_if_idle(true, backoff);  // rung during the pause: the backoff starts again
  CHECK(backoff.next() == microseconds(50));
}
