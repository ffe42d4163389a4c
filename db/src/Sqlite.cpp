#include "fuselens/db/Sqlite.h"

#include "fuselens/db/Printable.h"

#include <sqlite3.h>

#include <utility>

namespace fuselens::db {
namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what, int rc) {
  std::string message = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  throw Error(message);
}

/// `path` as the path of a file: URI (RFC 3986 / sqlite.org/uri.html): every byte but
/// unreserved characters and '/' percent-encoded, relative paths kept relative.
std::string uri_path(const std::string& path) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' ||
        b == '.' || b == '_' || b == '~' || b == '/') {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db, "preparing '" + std::string(sql.substr(0, 60)) + "'", rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) fail(db_, "binding an integer", rc);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) fail(db_, "binding a real", rc);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  const int rc = sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db_, "binding text", rc);
  return *this;
}

Statement& Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) fail(db_, "binding null", rc);
  return *this;
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  const int rc = sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(db_, "binding a blob", rc);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "stepping '" + std::string(sqlite3_sql(stmt_)).substr(0, 60) + "'", rc);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::run_keeping_bindings() {
  while (step()) {
  }
  sqlite3_reset(stmt_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
std::string Statement::database_path() const {
  const char* p = db_ != nullptr ? sqlite3_db_filename(db_, "main") : nullptr;
  return p != nullptr ? std::string(p) : std::string();
}
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return std::string();
  return printable(std::string_view(reinterpret_cast<const char*>(p),
                                    static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))));
}

std::string Statement::blob(int column) const {
  const void* p = sqlite3_column_blob(stmt_, column);
  if (p == nullptr) return std::string();
  return std::string(static_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::type_is_blob(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_BLOB;
}
bool Statement::type_is_integer(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER;
}

std::string Statement::raw_text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  std::string name = path;
  switch (mode) {
    case Mode::ReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::Immutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      // "file://" + an absolute path: an empty authority, so "//x" cannot read as a host.
      name = (path.rfind('/', 0) == 0 ? "file://" : "file:") + uri_path(path) + "?immutable=1";
      break;
    case Mode::ReadWrite:  // writing never goes through a symbolic link (issue 22)
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW;
      break;
    case Mode::Create:
      flags |=
          SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXCLUSIVE | SQLITE_OPEN_NOFOLLOW;
      break;
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message =
        "cannot open '" + path + "': " + (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(message);
  }
  // Captures may come from anywhere: no extensions, no writable schema, defensive mode.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_busy_timeout(db_, 10000);
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

Connection::Connection(Connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Connection::exec(std::string_view sql) {
  char* message = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string error = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw Error("'" + text.substr(0, 60) + "' failed on '" + path_ + "': " + error);
  }
}

std::int64_t Connection::query_int(std::string_view sql) const {
  Statement statement(db_, sql);
  if (!statement.step()) throw Error("query returned no row: " + std::string(sql));
  return statement.int64(0);
}

}  // namespace fuselens::db
