// The report pages: one renderer per page, shared by `xladb report` (a file) and `xladbd --http` (live).
//
//   runs    every run, newest first, with links to its page and to its diff against the run before (live only)
//   run     a run's modules by each metric and memory space (largest first), retrace groups, TPU kernels by
//           spill rate
//   module  one module: memory against program order (store/query/memory_timeline.h) with the peak marked, the
//           buffers live at XLA's peak (sortable by size, program order and padding; hovering one draws its
//           lifetime), and the module's trend across runs over its identity (the matching the gate uses)
//   home    the front page (home_page.cc): per followed label value the latest run, its verdict against the run
//           before and its largest modules with budget headroom; recent change points; the largest modules
//           over the last runs
//   diff    the gate's verdict (store/compare/check_run.h) with its attribution, and for the modules that changed most
//           both memory charts overlaid, the buffers that appeared, grew or shrank highlighted
//
// Contract
//   * Each returns a whole HTML document (page_frame.h: self-contained, no network) or a Status:
//     kNotFound for an unknown run or module (naming it), kInvalidArgument for a bad request.
//   * Bounded: tables list at most kMaxTableRows rows and say what they left out; charts are downsampled
//     (memory_chart.h); a module page lists every buffer of XLA's peak list.
//   * Names are escaped (html_text.h). Read-only statements on `db`, one thread at a time per connection.
#ifndef XLADB_SERVICE_PAGES_REPORT_PAGES_H_
#define XLADB_SERVICE_PAGES_REPORT_PAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "service/pages/page_frame.h"
#include "store/backend/database.h"
#include "store/compare/memory_budget.h"

namespace xladb::service::pages {

inline constexpr int64_t kMaxTableRows = 1000;

struct ReportRequest {
  std::string run;                // required
  std::string module;             // set: the module page
  std::string stage;              // picks among modules of one name ("" = any)
  int64_t xla_module_id = -1;     // picks among modules of one name (-1 = any)
  std::string folder;             // picks among modules of one name ("" = any)
  bool has_folder = false;
  std::string baseline;           // set: the diff page (a run name, label:K=V or commit:SHA)
  store::MemoryBudgets budgets;   // the diff page's (store/compare/memory_budget.h); with them the diff page is
                                  // drawn without a baseline too
};

struct HomeRequest {
  std::string label_key;          // group runs by this label's value ("" = every run, one group)
  store::MemoryBudgets budgets;   // the headroom column and the verdicts' budgets
};

StatusOr<std::string> RenderHomePage(store::Database& db, const HomeRequest& request, const PageLinks& links);
StatusOr<std::string> RenderRunsPage(store::Database& db, const PageLinks& links);
StatusOr<std::string> RenderRunPage(store::Database& db, const std::string& run, const PageLinks& links);
StatusOr<std::string> RenderModulePage(store::Database& db, const ReportRequest& request, const PageLinks& links);
StatusOr<std::string> RenderDiffPage(store::Database& db, const ReportRequest& request, const PageLinks& links);

// The page a request names: diff when it has a baseline, module when it names a module, else the run page.
// kInvalidArgument for a module and a baseline together, or no run.
StatusOr<std::string> RenderReport(store::Database& db, const ReportRequest& request, const PageLinks& links);

}  // namespace xladb::service::pages

#endif  // XLADB_SERVICE_PAGES_REPORT_PAGES_H_
