#include "base/sqlite_db.hpp"

#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "dptune/errors.hpp"

namespace dptune::host {

namespace {
/// How long a statement waits for another process's lock (the busy handler), and the WAL switch
/// retries.
constexpr std::chrono::milliseconds kBusyWait{60000};
}  // namespace

SqliteDb::SqliteDb(const std::filesystem::path& file, bool create, bool power_safe) : file_(file) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(file.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw dptune::Error(file.string() + ": cannot open the database: " + why);
  }
  // Concurrent writers (two runs on one ledger) wait for each other rather than fail at once.
  sqlite3_busy_timeout(db_, static_cast<int>(kBusyWait.count()));
  enter_wal_mode();
  // FULL: a commit is on disk before COMMIT returns, also in WAL mode (the ledger: a charge must
  // not vanish).  NORMAL costs no fsync per commit (the study store: one per evaluation).
  exec(power_safe ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

// Switching a database to WAL needs its exclusive lock, and when processes race for it (parallel
// runs opening a new ledger at the same instant) SQLite may answer SQLITE_BUSY at once, without
// the busy handler, to avoid a deadlock.  Retried for as long as the busy timeout would wait.
void SqliteDb::enter_wal_mode() {
  const auto deadline = std::chrono::steady_clock::now() + kBusyWait;
  for (;;) {
    try {
      exec("PRAGMA journal_mode=WAL");
      return;
    } catch (const dptune::Error&) {
      const int code = sqlite3_errcode(db_);
      if ((code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() > deadline)
        throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::int64_t SqliteDb::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

void SqliteDb::fail(const std::string& what) const {
  throw dptune::Error(file_.string() + ": " + what + ": " + sqlite3_errmsg(db_));
}

void SqliteDb::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : "unknown error";
    sqlite3_free(message);
    throw dptune::Error(file_.string() + ": " + why + " (in: " + sql.substr(0, 60) + ")");
  }
}

SqliteStatement::SqliteStatement(SqliteDb& db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
    db.fail("cannot prepare '" + sql.substr(0, 60) + "'");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, const std::string& value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind_blob(int index, const std::string& bytes) {
  if (sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_.fail("bind");
  return *this;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("step");
}

void SqliteStatement::run() {
  while (step()) {
  }
}

std::int64_t SqliteStatement::int_at(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double SqliteStatement::double_at(int column) const { return sqlite3_column_double(stmt_, column); }
std::string SqliteStatement::text_at(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  return data ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}
bool SqliteStatement::null_at(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

SqliteTransaction::SqliteTransaction(SqliteDb& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!done_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

}  // namespace dptune::host
