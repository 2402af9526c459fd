// IngestServiceImpl: the xladb.v1.IngestService handlers. They validate requests, then hand work to the
// IngestQueue (the single writer) and report its jobs.
//
// Contract
//   * IngestPath reads only under the AccessPolicy's allowed roots (resolved: no `..`, no symlink escape).
//   * Upload stages the streamed files under `spool_dir` (one fresh folder per upload, created 0700), never
//     outside it: paths must be relative without `..` components. Limits on total bytes and file count end
//     the call with RESOURCE_EXHAUSTED and remove what was staged. The staged folder is removed once ingested.
//   * Thread-safe.
#ifndef XLADB_SERVICE_INGEST_SERVICE_H_
#define XLADB_SERVICE_INGEST_SERVICE_H_

#include <cstdint>
#include <string>

#include <grpcpp/grpcpp.h>

#include "service/access_policy.h"
#include "service/ingest_queue.h"
#include "xladb/v1/xladb.grpc.pb.h"

namespace xladb::service {

struct UploadLimits {
  int64_t max_bytes = int64_t{16} << 30;  // per upload
  int64_t max_files = 100000;             // per upload
};

// Fills an IngestJob message from a JobStatus.
void ToProto(const JobStatus& status, v1::IngestJob* out);

class IngestServiceImpl final : public xladb::v1::IngestService::Service {
 public:
  IngestServiceImpl(IngestQueue* queue, const AccessPolicy* access, std::string spool_dir, UploadLimits limits)
      : queue_(queue), access_(access), spool_dir_(std::move(spool_dir)), limits_(limits) {}

  grpc::Status IngestPath(grpc::ServerContext*, const v1::IngestPathRequest*, v1::IngestJob*) override;
  grpc::Status Upload(grpc::ServerContext*, grpc::ServerReader<v1::UploadChunk>*, v1::IngestJob*) override;
  grpc::Status GetIngestJob(grpc::ServerContext*, const v1::GetIngestJobRequest*, v1::IngestJob*) override;
  grpc::Status WatchIngestJob(grpc::ServerContext*, const v1::GetIngestJobRequest*,
                              grpc::ServerWriter<v1::IngestJob>*) override;

 private:
  // Waits (while the client is there) until the job finishes; fills `out` with its last state.
  grpc::Status WaitAndReport(grpc::ServerContext* ctx, const std::string& job_id, v1::IngestJob* out);

  IngestQueue* queue_;
  const AccessPolicy* access_;
  std::string spool_dir_;
  UploadLimits limits_;
};

}  // namespace xladb::service

#endif  // XLADB_SERVICE_INGEST_SERVICE_H_
