#pragma once
// Thin RAII wrappers over the SQLite C API, shared by the Writer and the Reader. Every failing
// SQLite call throws db::Error carrying the call, the file and line, and SQLite's message.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace fuselens::db {

/// Any database problem: missing file, not a FuseLens capture, newer schema, SQLite failure.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);
  /// Binds `bytes` as a BLOB (copied by SQLite).
  Statement& bind_blob(int index, std::string_view bytes);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, static_cast<std::int64_t>(*value)) : bind_null(index);
  }

  /// Advances; true while a row is available, false once done. Throws on errors.
  bool step();
  /// Runs a statement that returns no rows, then resets it for reuse.
  void run();
  /// As run(), but keeps the bound values (for a caller that binds every parameter again).
  void run_keeping_bindings();
  void reset();

  // Columns are 0-based, as in SQLite.
  std::int64_t int64(int column) const;
  double real(int column) const;
  /// The column as text in its printable form (Printable.h: control characters and invalid
  /// UTF-8 escaped) and cut to kMaxTextBytes, so that no string read from a capture reaches a
  /// terminal, a CSV or HTML file or the GUI raw or unbounded; "" for NULL.
  std::string text(int column) const;
  /// The column's bytes as stored, neither escaped nor cut: only for text that is parsed (a JSON
  /// document) and whose parts are then made printable.
  std::string raw_text(int column) const;
  bool is_null(int column) const;
  /// The column's bytes as a BLOB ("" for NULL); check type_is_blob first where it matters.
  std::string blob(int column) const;
  /// True when the column's value is a BLOB.
  bool type_is_blob(int column) const;
  /// True when the column's value is an INTEGER (not NULL, REAL, TEXT or BLOB).
  bool type_is_integer(int column) const;
  /// The file of the database the statement reads ("main"; empty for an in-memory database).
  std::string database_path() const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Connection {
 public:
  /// Immutable: read-only, and SQLite told the file cannot change (URI parameter immutable=1):
  /// no lock, no -wal/-shm file created, a -journal or -wal beside it ignored.
  enum class Mode { ReadOnly, ReadWrite, Create, Immutable };
  /// Opens `path`. ReadOnly and Immutable never change the file; Create fails if it exists.
  Connection(const std::string& path, Mode mode);
  ~Connection();
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) const { return Statement(db_, sql); }
  /// Value of a single-integer query such as "PRAGMA user_version".
  std::int64_t query_int(std::string_view sql) const;
  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back if it throws.
template <typename F>
void in_transaction(Connection& connection, F&& body) {
  connection.exec("BEGIN IMMEDIATE");
  try {
    body();
  } catch (...) {
    try {
      connection.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
  connection.exec("COMMIT");
}

}  // namespace fuselens::db
