#include "cli/run_commands.h"

#include <cstdio>

#include "store/database.h"
#include "store/queries.h"
#include "store/run_lifecycle.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::cli {
namespace {

void PrintLabels(const std::string& run, const std::vector<std::pair<std::string, std::string>>& labels) {
  std::printf("run %s:", run.c_str());
  if (labels.empty()) std::printf(" no labels");
  for (const auto& [key, value] : labels) std::printf(" %s=%s", key.c_str(), value.c_str());
  std::printf("\n");
}

int OfflineFailure(const Status& st) {
  std::fprintf(stderr, "xladb: %s\n", st.message().c_str());
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

}  // namespace xladb::cli
