// dptune host (internal): a small RAII layer over SQLite, shared by the study store and the ledger.
//
// Every write goes through a Transaction (BEGIN IMMEDIATE ... COMMIT): SQLite's journal makes each
// one atomic and durable, so a process killed at any instant leaves the last committed state
// (SQLite documentation, "Atomic Commit In SQLite").  WAL mode lets `study show` read while a run
// writes; a busy timeout serialises concurrent writers instead of failing them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace dptune::host {

class SqliteDb;

/// One prepared statement; bind by 1-based index, step through rows.
class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, std::int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, const std::string& value);
  SqliteStatement& bind_blob(int index, const std::string& bytes);
  SqliteStatement& bind_null(int index);
  /// True while a row is available.
  bool step();
  /// Runs a statement that returns no rows.
  void run();
  std::int64_t int_at(int column) const;
  double double_at(int column) const;
  std::string text_at(int column) const;  // also blobs, as bytes
  bool null_at(int column) const;

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
 public:
  /// Opens (creating when `create`) the database at `file` in WAL mode with a busy timeout.
  /// `power_safe`: every commit is on disk when COMMIT returns (synchronous=FULL); otherwise a
  /// commit survives a crash of the process (kill -9) but the last ones may be lost on power loss
  /// (synchronous=NORMAL in WAL mode: a suffix of transactions, never a part of one).  Throws
  /// dptune::Error naming the file.
  SqliteDb(const std::filesystem::path& file, bool create, bool power_safe = true);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);
  sqlite3* handle() { return db_; }
  std::int64_t last_insert_id() const;
  const std::filesystem::path& file() const { return file_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void enter_wal_mode();

  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

/// BEGIN IMMEDIATE (the write lock is taken at once, so two writers never both read-then-write);
/// rolls back unless commit() was called.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

/// The time a store writes beside a row: UTC, ISO 8601 to the second ("2026-11-29T03:10:00Z").
std::string now_utc();

}  // namespace dptune::host
