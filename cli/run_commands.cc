#include "cli/run_commands.h"

#include <cstdio>

#include "ingest/source/run_name.h"
#include "ingest/text/visible_text.h"
#include "store/backend/database.h"
#include "store/query/queries.h"
#include "store/admin/run_lifecycle.h"
#include "base/unix_time.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

void PrintLabels(const std::string& run, const std::vector<std::pair<std::string, std::string>>& labels) {
  std::printf("run %s:", ingest::EscapeControlCharacters(run).c_str());
  if (labels.empty()) std::printf(" no labels");
  for (const auto& [key, value] : labels) {
    std::printf(" %s=%s", ingest::EscapeControlCharacters(key).c_str(), ingest::EscapeControlCharacters(value).c_str());
  }
  std::printf("\n");
}

int OfflineFailure(const Status& st) {
  std::fprintf(stderr, "xladb: %s\n", ingest::EscapeControlCharacters(st.message()).c_str());
  return kExitFailure;
}

}  // namespace

int CmdLabel(const ClientOptions& o, const std::string& db_path, const LabelArgs& a) {
  if (a.set.empty() && a.remove.empty()) {
    std::fprintf(stderr, "xladb: label needs KEY=VALUE to set or --remove KEY\n");
    return kExitUsage;
  }
  if (!db_path.empty()) {
    auto db = store::Database::Open(db_path);
    if (!db.ok()) return OfflineFailure(db.status());
    if (Status st = store::RelabelRun(**db, a.run, a.set, a.remove); !st.ok()) return OfflineFailure(st);
    auto run = store::GetRun(**db, a.run);
    if (!run.ok()) return OfflineFailure(run.status());
    PrintLabels(a.run, run->labels);
    return kExitOk;
  }
  auto stub = v1::IngestService::NewStub(Connect(o));
  v1::LabelRunRequest req;
  req.set_run_name(a.run);
  for (const auto& [key, value] : a.set) {
    auto* l = req.add_set();
    l->set_key(key);
    l->set_value(value);
  }
  for (const auto& key : a.remove) req.add_remove(key);
  grpc::ClientContext ctx;
  Prepare(o, &ctx);
  v1::Run run;
  grpc::Status st = stub->LabelRun(&ctx, req, &run);
  if (!st.ok()) return Fail(o, st);
  std::vector<std::pair<std::string, std::string>> labels;
  for (const auto& l : run.labels()) labels.emplace_back(l.key(), l.value());
  PrintLabels(a.run, labels);
  return kExitOk;
}

int CmdDelete(const ClientOptions& o, const std::string& db_path, const std::string& run) {
  v1::DeleteRunResponse deleted;
  if (!db_path.empty()) {
    auto db = store::Database::Open(db_path);
    if (!db.ok()) return OfflineFailure(db.status());
    auto d = store::DeleteRun(**db, run);
    if (!d.ok()) return OfflineFailure(d.status());
    deleted.set_files(d->files);
    deleted.set_modules(d->modules);
    deleted.set_rows(d->rows);
  } else {
    auto stub = v1::IngestService::NewStub(Connect(o));
    v1::DeleteRunRequest req;
    req.set_run_name(run);
    grpc::ClientContext ctx;
    Prepare(o, &ctx);
    grpc::Status st = stub->DeleteRun(&ctx, req, &deleted);
    if (!st.ok()) return Fail(o, st);
  }
  std::printf("deleted run %s: %lld files, %lld modules, %lld rows\n", run.c_str(),
              static_cast<long long>(deleted.files()), static_cast<long long>(deleted.modules()),
              static_cast<long long>(deleted.rows()));
  return kExitOk;
}

int CmdPrune(const ClientOptions& o, const std::string& db_path, const PruneArgs& a) {
  if (a.keep_detail_days < 0) {
    std::fprintf(stderr, "xladb: prune needs --keep-detail-days N (N >= 0)\n");
    return kExitUsage;
  }
  v1::PruneDetailResponse pruned;
  if (!db_path.empty()) {
    auto db = store::Database::Open(db_path);
    if (!db.ok()) return OfflineFailure(db.status());
    store::PruneOptions options{a.keep_detail_days, a.keep_labels, UnixMicrosNow()};
    auto p = store::PruneDetail(**db, options);
    if (!p.ok()) return OfflineFailure(p.status());
    pruned.set_runs(p->runs);
    pruned.set_rows(p->rows);
    pruned.set_bytes_before(p->bytes_before);
    pruned.set_bytes_after(p->bytes_after);
  } else {
    auto stub = v1::IngestService::NewStub(Connect(o));
    v1::PruneDetailRequest req;
    req.set_keep_detail_days(a.keep_detail_days);
    for (const auto& [key, value] : a.keep_labels) {
      auto* l = req.add_keep_labels();
      l->set_key(key);
      l->set_value(value);
    }
    grpc::ClientContext ctx;
    Prepare(o, &ctx, /*deadline=*/false);  // a first prune of an old file rewrites it (VACUUM): no deadline
    grpc::Status st = stub->PruneDetail(&ctx, req, &pruned);
    if (!st.ok()) return Fail(o, st);
  }
  std::printf("pruned %lld runs older than %lld days: %lld rows removed, database %lld -> %lld bytes\n",
              static_cast<long long>(pruned.runs()), static_cast<long long>(a.keep_detail_days),
              static_cast<long long>(pruned.rows()), static_cast<long long>(pruned.bytes_before()),
              static_cast<long long>(pruned.bytes_after()));
  return kExitOk;
}

bool ParseLabels(const std::vector<std::string>& raw, std::vector<std::pair<std::string, std::string>>* out) {
  for (const auto& kv : raw) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "xladb: label '%s' is not key=value\n", ingest::EscapeControlCharacters(kv).c_str());
      return false;
    }
    // The server and the store refuse such a label too; refusing it here is a usage error, before any call.
    if (Status valid = ingest::ValidateRunLabel(kv.substr(0, eq), kv.substr(eq + 1)); !valid.ok()) {
      std::fprintf(stderr, "xladb: %s\n", valid.message().c_str());
      return false;
    }
    out->emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return true;
}

}  // namespace xladb::cli
