#include "cli/sql_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cli/call_watchdog.h"
#include "cli/output.h"
#include "proto/wire_text.h"

namespace xladb::cli {

int CmdSql(QueryClient& client, const std::string& sql, int64_t max_rows) {
  v1::QueryRequest req;
  req.set_sql(sql);
  req.set_max_rows(max_rows);
  grpc::ClientContext ctx;
  client.Prepare(&ctx);
  auto reader = client.stub().Query(&ctx, req);
  v1::QueryResponse msg;
  ResultPrinter p(client.options().format, stdout);
  bool columns_set = false, truncated = false, last_seen = false;
  std::vector<Cell> cells;
  while (reader->Read(&msg)) {
    if (!columns_set) {
      std::vector<std::string> names;
      for (const auto& c : msg.columns()) names.push_back(c.name());
      p.SetColumns(std::move(names));
      columns_set = true;
    }
    for (const auto& row : msg.rows()) {
      cells.resize(static_cast<size_t>(row.values_size()));
      for (int i = 0; i < row.values_size(); ++i) {
        const auto& v = row.values(i);
        Cell& c = cells[static_cast<size_t>(i)];
        c.is_null = v.value_case() == v1::Value::VALUE_NOT_SET;
        c.is_number = v.value_case() == v1::Value::kIntValue || v.value_case() == v1::Value::kRealValue;
        switch (v.value_case()) {
          case v1::Value::kIntValue: c.text = std::to_string(v.int_value()); break;
          case v1::Value::kRealValue: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", v.real_value());
            c.text = buf;
            break;
          }
          case v1::Value::kTextValue: c.text = v.text_value(); break;
          case v1::Value::kBytesValue: c.text = wire::EscapeInvalidUtf8(v.bytes_value()); break;
          case v1::Value::kTextBytesValue: c.text = wire::EscapeInvalidUtf8(v.text_bytes_value()); break;
          default: c.text.clear();
        }
      }
      p.AddRow(cells);
    }
    truncated = truncated || msg.truncated();
    last_seen = last_seen || msg.last();
  }
  // A stream that ends without its last message either failed on the server (Finish brings its status at
  // once) or was cut here (a message this client could not read) while the server goes on sending: then
  // Finish would wait for it. Cancel the call if Finish has not returned shortly.
  bool cancelled_here = false;
  grpc::Status st;
  if (last_seen) {
    st = reader->Finish();
  } else {
    InactivityWatchdog watchdog(&ctx, std::chrono::seconds(2));
    st = reader->Finish();
    cancelled_here = watchdog.fired();
  }
  if (cancelled_here) {
    std::fprintf(stderr, "xladb: the answer from %s was cut short after %lld rows (a message could "
                         "not be read); nothing more was printed\n",
                 client.where().c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!st.ok()) return client.Fail(st);
  if (!last_seen) {
    std::fprintf(stderr, "xladb: the answer from %s ended without its last message after %lld rows\n",
                 client.where().c_str(), static_cast<long long>(p.rows()));
    return kExitFailure;
  }
  if (!columns_set) p.SetColumns({});
  p.Finish();
  if (truncated) std::fprintf(stderr, "xladb: result truncated at %lld rows (raise --max-rows)\n",
                              static_cast<long long>(p.rows()));
  return kExitOk;
}

}  // namespace xladb::cli
