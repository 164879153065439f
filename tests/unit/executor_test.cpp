// Executors: every index runs once, exceptions surface, nesting does not deadlock.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "dptune/host/executor.hpp"

using dptune::host::make_executor;

TEST_CASE("executor: runs every index exactly once") {
  for (const char* kind : {"inline", "threads"}) {
    auto ex = make_executor(kind, 3);
    std::vector<std::atomic<int>> hits(1000);
    ex->parallel_for(hits.size(), [&](std::size_t i) { hits[i]++; });
    for (auto& h : hits) CHECK(h.load() == 1);
  }
  CHECK(make_executor("inline", 8)->threads() == 1);
  CHECK(make_executor("threads", 3)->threads() == 3);
  CHECK(make_executor("threads", 0)->threads() >= 1);
  CHECK_THROWS_AS(make_executor("gpu", 1), std::exception);
}

TEST_CASE("executor: the first failing index's exception is rethrown after all tasks finish") {
  auto ex = make_executor("threads", 2);
  std::atomic<int> ran{0};
  try {
    ex->parallel_for(100, [&](std::size_t i) {
      ran++;
      if (i == 17 || i == 60) throw std::runtime_error("task " + std::to_string(i));
    });
    FAIL("expected an exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "task 17");
  }
  CHECK(ran.load() == 100);
}

TEST_CASE("executor: nested parallel_for runs inline instead of deadlocking") {
  auto ex = make_executor("threads", 2);
  std::atomic<int> total{0};
  ex->parallel_for(8, [&](std::size_t) { ex->parallel_for(8, [&](std::size_t) { total++; }); });
  CHECK(total.load() == 64);
}
