// The cross-run questions of store/query/queries.h over databases built by the real ingester: the five seeds laid
// out as dump folders (three runs, one of them modified), and the two corpus runs when present. Expected
// numbers are counted from the dump files (see the comment at each).
#include "tests/store/run_queries_fixture.h"

namespace xladb::testing {
namespace {

// --- ListRuns / GetRun -------------------------------------------------------------------------------

TEST_F(SeedRunQueries, ListRunsNewestFirstWithLabelsAndCounts) {
  auto page = store::ListRuns(*db_, {});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(RunNames(page->runs), (std::vector<std::string>{"nightly-3", "nightly-2", "nightly-1"}));
  EXPECT_EQ(page->next_page_token, "");
  const store::RunInfo& oldest = page->runs[2];
  EXPECT_EQ(oldest.run_time_us, kNov1Us);
  EXPECT_EQ(oldest.run_time_source, "flag");
  EXPECT_EQ(oldest.labels, (store::Labels{{"branch", "main"}, {"commit", "a1"}}));
  // Labels come back sorted by key whatever the order they were given in.
  EXPECT_EQ(page->runs[1].labels, (store::Labels{{"branch", "main"}, {"commit", "b2"}}));
  // MakeSeedRun writes 6 files: 5 ingested, the thunk sequence not; three buffer assignments.
  EXPECT_EQ(oldest.file_count, 6);
  EXPECT_EQ(oldest.ingested_file_count, 5);
  EXPECT_EQ(oldest.error_file_count, 0);
  EXPECT_EQ(oldest.module_count, 3);
  EXPECT_NE(oldest.source_path.find("nightly-1"), std::string::npos);
}

TEST_F(SeedRunQueries, ListRunsFiltersByLabelTimeAndName) {
  store::RunFilter main;
  main.labels = {{"branch", "main"}};
  auto runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-2", "nightly-1"}));

  main.labels = {{"branch", "main"}, {"commit", "a1"}};
  runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-1"}));

  main.labels = {{"branch", "release"}};
  runs = store::ListRuns(*db_, main);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->runs.empty());

  store::RunFilter since;  // since is inclusive, until exclusive
  since.since_us = kNov1Us + kDayUs;
  runs = store::ListRuns(*db_, since);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  since.until_us = kNov1Us + 2 * kDayUs;
  runs = store::ListRuns(*db_, since);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-2"}));

  store::RunFilter until;
  until.until_us = kNov1Us + kDayUs;
  runs = store::ListRuns(*db_, until);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-1"}));

  store::RunFilter name;
  name.name_pattern = "nightly-[13]";
  runs = store::ListRuns(*db_, name);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(RunNames(runs->runs), (std::vector<std::string>{"nightly-3", "nightly-1"}));
  name.name_pattern = "Nightly-*";  // GLOB is case-sensitive
  runs = store::ListRuns(*db_, name);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->runs.empty());
}

TEST_F(SeedRunQueries, ListRunsPagesThroughEveryRunOnce) {
  store::RunFilter filter;
  filter.page_size = 2;
  auto first = store::ListRuns(*db_, filter);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(RunNames(first->runs), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  ASSERT_NE(first->next_page_token, "");
  filter.page_token = first->next_page_token;
  auto second = store::ListRuns(*db_, filter);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(RunNames(second->runs), (std::vector<std::string>{"nightly-1"}));
  EXPECT_EQ(second->next_page_token, "");
  // The labels and counts are filled on later pages too.
  EXPECT_EQ(second->runs[0].labels.size(), 2u);
  EXPECT_EQ(second->runs[0].module_count, 3);

  // One run per page, with a filter: the pages follow the filtered order.
  filter = {};
  filter.page_size = 1;
  filter.labels = {{"branch", "main"}};
  std::vector<std::string> seen;
  int pages = 0;
  do {
    auto page = store::ListRuns(*db_, filter);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_LE(page->runs.size(), 1u);
    for (const auto& r : page->runs) seen.push_back(r.name);
    filter.page_token = page->next_page_token;
    ASSERT_LT(++pages, 10);
  } while (!filter.page_token.empty());
  EXPECT_EQ(seen, (std::vector<std::string>{"nightly-2", "nightly-1"}));
}

TEST_F(SeedRunQueries, ListRunsRejectsBadTokensPatternsAndPageSizes) {
  store::RunFilter filter;
  filter.page_token = "not-a-token";
  auto page = store::ListRuns(*db_, filter);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(page.status().message().find("not-a-token"), std::string::npos);

  filter = {};
  filter.name_pattern = "nightly-[12";
  page = store::ListRuns(*db_, filter);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Status::Code::kInvalidArgument);

  filter = {};
  filter.page_size = -5;
  EXPECT_EQ(store::ListRuns(*db_, filter).status().code(), Status::Code::kInvalidArgument);
  filter.page_size = 0;  // the default page
  page = store::ListRuns(*db_, filter);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->runs.size(), 3u);
}

TEST_F(SeedRunQueries, GetRunAndItsNotFound) {
  auto run = store::GetRun(*db_, "nightly-2");
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->name, "nightly-2");
  EXPECT_EQ(run->run_time_us, kNov1Us + kDayUs);
  // The modified run: splash kernel, train step and the added flash kernel have buffer assignments.
  EXPECT_EQ(run->module_count, 3);
  EXPECT_EQ(run->file_count, 6);

  auto missing = store::GetRun(*db_, "nightly-9");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("nightly-9"), std::string::npos);
}

// --- ListModules ---------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, ListModulesOrdersByNameStageAndId) {
  auto modules = store::ListModules(*db_, "nightly-1");
  ASSERT_TRUE(modules.ok()) << modules.status().ToString();
  // Five modules: the three buffer assignments, the splash kernel's HLO text (module_0004, seed 003) and
  // the bundle profile's compilation unit (no module number, no stage). Byte order: 'S' before 'j'.
  ASSERT_EQ(modules->size(), 5u);
  const auto& m = *modules;
  EXPECT_EQ(m[0].name, "SyncTensorsGraph.105");
  EXPECT_EQ(m[0].stage, "sm_8.0_gpu_after_optimizations");
  EXPECT_EQ(m[0].backend, "cuda");
  EXPECT_TRUE(m[0].has_buffer_assignment);
  EXPECT_EQ(m[0].peak_bytes, 931536164);
  EXPECT_EQ(m[0].allocation_count, 26);
  EXPECT_EQ(m[0].value_count, 49);
  EXPECT_EQ(m[1].name, kSplash);
  EXPECT_EQ(m[1].stage, "");
  EXPECT_EQ(m[1].xla_module_id, -1);
  EXPECT_FALSE(m[1].has_buffer_assignment);
  EXPECT_EQ(m[2].name, kSplash);
  EXPECT_EQ(m[2].xla_module_id, 1);
  EXPECT_TRUE(m[2].has_buffer_assignment);
  EXPECT_EQ(m[2].peak_bytes, 18612288);
  EXPECT_EQ(m[2].peak_time, 6);
  EXPECT_EQ(m[2].total_bytes, 18629632);
  EXPECT_EQ(m[2].temp_bytes, 1851392);  // allocations 6 (1048576) and 7 (802816), preallocated-temp
  EXPECT_EQ(m[3].name, kSplash);
  EXPECT_EQ(m[3].xla_module_id, 4);
  EXPECT_FALSE(m[3].has_buffer_assignment);
  EXPECT_EQ(m[3].peak_bytes, -1);
  EXPECT_EQ(m[3].instruction_count, 79);
  EXPECT_EQ(m[4].name, "jit_train_step");
  EXPECT_EQ(m[4].peak_bytes, 184680476);

  auto jit = store::ListModules(*db_, "nightly-1", "jit_*");
  ASSERT_TRUE(jit.ok());
  EXPECT_EQ(jit->size(), 4u);
  auto exact = store::ListModules(*db_, "nightly-1", "jit_train_step");
  ASSERT_TRUE(exact.ok());
  ASSERT_EQ(exact->size(), 1u);
  EXPECT_EQ((*exact)[0].xla_module_id, 2);

  auto missing = store::ListModules(*db_, "no-such-run");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-run"), std::string::npos);
}

// --- PeakMemoryTrend -----------------------------------------------------------------------------------

// nightly-2 holds seed 002 under the splash kernel's name: another entry signature, so another identity.
// The trend keeps the two apart: seed 000's series (nightly-1, nightly-3, change 0) and seed 002's (nightly-2
// alone, no change), never a change between the two programs.
TEST_F(SeedRunQueries, TrendFollowsOneIdentity) {
  store::TrendQuery query;
  query.module = kSplash;
  auto trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  ASSERT_EQ(trend->size(), 3u);
  std::map<std::string, store::TrendPoint> by_run;
  for (const auto& p : *trend) by_run[p.run_name] = p;
  ASSERT_EQ(by_run.size(), 3u);
  // Seed 000's last cumulative, seed 002's, seed 000's again.
  EXPECT_EQ(by_run["nightly-1"].value, 18612288);
  EXPECT_EQ(by_run["nightly-2"].value, 184680476);
  EXPECT_EQ(by_run["nightly-3"].value, 18612288);
  EXPECT_EQ(by_run["nightly-1"].run_time_us, kNov1Us);
  EXPECT_EQ(by_run["nightly-1"].xla_module_id, 1);
  EXPECT_EQ(by_run["nightly-1"].stage, "after_optimizations");
  EXPECT_EQ(by_run["nightly-1"].identity_key, by_run["nightly-3"].identity_key);
  EXPECT_NE(by_run["nightly-1"].identity_key, by_run["nightly-2"].identity_key);
  EXPECT_NE(by_run["nightly-1"].entry_signature, by_run["nightly-2"].entry_signature);
  EXPECT_FALSE(by_run["nightly-1"].has_change);
  EXPECT_FALSE(by_run["nightly-2"].has_change);
  EXPECT_TRUE(by_run["nightly-3"].has_change);
  EXPECT_EQ(by_run["nightly-3"].change, 0);
  EXPECT_EQ(by_run["nightly-3"].matched_by, "identity");
  // A series is contiguous: nightly-1 and nightly-3 are next to each other.
  int64_t one = -1, three = -1;
  for (size_t i = 0; i < trend->size(); ++i) {
    if ((*trend)[i].run_name == "nightly-1") one = static_cast<int64_t>(i);
    if ((*trend)[i].run_name == "nightly-3") three = static_cast<int64_t>(i);
  }
  EXPECT_EQ(three, one + 1);

  query.metric = "total_bytes";  // `Total bytes used` of seeds 000, 002, 000
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 3u);
  for (const auto& p : *trend) {
    EXPECT_EQ(p.value, p.run_name == "nightly-2" ? 230870056 : 18629632) << p.run_name;
    if (p.run_name == "nightly-2") {
      EXPECT_EQ(p.peak_bytes, 184680476);
    }
  }
  query.metric = "temp_bytes";
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 3u);
  for (const auto& p : *trend) EXPECT_EQ(p.value, p.run_name == "nightly-2" ? 176341032 : 1851392) << p.run_name;
  query.metric = "no_such_metric";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, query).status().code(), Status::Code::kInvalidArgument);
}

TEST_F(SeedRunQueries, TrendLastNLabelsStageAndPatterns) {
  store::TrendQuery query;
  query.module = kSplash;
  query.last_n = 2;
  auto trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok()) << trend.status().ToString();
  EXPECT_EQ(SortedRunNames(*trend), (std::vector<std::string>{"nightly-2", "nightly-3"}));

  query.labels = {{"branch", "main"}};
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(SortedRunNames(*trend), (std::vector<std::string>{"nightly-1", "nightly-2"}));
  query.last_n = 1;
  trend = store::PeakMemoryTrend(*db_, query);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(RunNames(*trend), (std::vector<std::string>{"nightly-2"}));

  // last_n counts runs, not points: two modules match `jit_*` in each run.
  store::TrendQuery pattern;
  pattern.module = "jit_*";
  pattern.last_n = 1;
  trend = store::PeakMemoryTrend(*db_, pattern);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ((*trend)[0].module_name, kSplash);
  EXPECT_EQ((*trend)[1].module_name, "jit_train_step");
  pattern.last_n = -1;
  trend = store::PeakMemoryTrend(*db_, pattern);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(trend->size(), 7u);  // 2 + 3 (nightly-2 adds jit_flash_kernel) + 2

  store::TrendQuery gpu;
  gpu.module = "*";
  gpu.stage = "sm_8.0_gpu_after_optimizations";
  trend = store::PeakMemoryTrend(*db_, gpu);
  ASSERT_TRUE(trend.ok());
  // SyncTensorsGraph.105 (seed 004) is in nightly-1 and nightly-3 only.
  EXPECT_EQ(RunNames(*trend), (std::vector<std::string>{"nightly-1", "nightly-3"}));
  EXPECT_EQ((*trend)[0].value, 931536164);

  // Nothing matches: kNotFound saying why.
  store::TrendQuery none;
  none.module = "jit_no_such_module";
  trend = store::PeakMemoryTrend(*db_, none);
  ASSERT_EQ(trend.status().code(), Status::Code::kNotFound);
  EXPECT_NE(trend.status().message().find("not found in any run"), std::string::npos);
  none.module = kSplash;
  none.stage = "before_optimizations";
  trend = store::PeakMemoryTrend(*db_, none);
  ASSERT_EQ(trend.status().code(), Status::Code::kNotFound);
  EXPECT_NE(trend.status().message().find("stage 'before_optimizations'"), std::string::npos)
      << trend.status().message();
  none.stage = "";

  none.module = "jit_[";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, none).status().code(), Status::Code::kInvalidArgument);
  none.module = "";
  EXPECT_EQ(store::PeakMemoryTrend(*db_, none).status().code(), Status::Code::kInvalidArgument);
}

// The seeds' peaks, read from the dump text (PeakListBytes): seed 000 under the splash kernel's name in
// nightly-1 and nightly-3 and as jit_flash_kernel in nightly-2, seed 002 as jit_train_step in every run and
// under the splash kernel's name in nightly-2, seed 004 in nightly-1 and nightly-3. The splash kernel's HLO
// text and bundle profile have no peak list, so no point.
TEST_F(SeedRunQueries, TrendOfEveryModuleIsThePeakListOfItsDump) {
  const int64_t seed000 = PeakListBytes(ReadFile(SeedFile("000")));
  const int64_t seed002 = PeakListBytes(ReadFile(SeedFile("002")));
  const int64_t seed004 = PeakListBytes(ReadFile(SeedFile("004")));
  EXPECT_EQ(seed000, 18612288);  // the last `cumulative:` of seed 000's peak list
  const std::vector<TrendPoint> expected = {
      {"nightly-1", "SyncTensorsGraph.105", 3, seed004}, {"nightly-1", kSplash, 1, seed000},
      {"nightly-1", "jit_train_step", 2, seed002},        {"nightly-2", "jit_flash_kernel", 5, seed000},
      {"nightly-2", kSplash, 1, seed002},                 {"nightly-2", "jit_train_step", 2, seed002},
      {"nightly-3", "SyncTensorsGraph.105", 3, seed004}, {"nightly-3", kSplash, 1, seed000},
      {"nightly-3", "jit_train_step", 2, seed002}};
  ExpectTrendsAre(*db_, expected);
}

// --- SpillRates ----------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, SpillRatesOfSeed001) {
  store::SpillQuery query;
  query.run = "nightly-1";
  auto rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // Seed 001 has four blocks: two <no-hlo-instruction> (grouped into one row), the splash kernel, iota.1.
  ASSERT_EQ(rows->size(), 3u);
  const store::SpillRateRow& splash = (*rows)[0];
  EXPECT_EQ(splash.kernel, "splash_mha_fwd_08d1d988.1");
  EXPECT_EQ(splash.run_name, "nightly-1");
  EXPECT_EQ(splash.run_time_us, kNov1Us);
  EXPECT_EQ(splash.module_name, kSplash);
  // ` - VMEM_SPILL_COUNT: (13457/15135)`, `VMEM_FILL_COUNT: (14679/15135)`, `SMEM_SPILL_COUNT: (15/15135)`,
  // `SMEM_FILL_COUNT: (18/15135)`.
  EXPECT_EQ(splash.vmem_spills, 13457);
  EXPECT_EQ(splash.bundles, 15135);
  EXPECT_EQ(splash.vmem_fills, 14679);
  EXPECT_EQ(splash.smem_spills, 15);
  EXPECT_EQ(splash.smem_fills, 18);
  EXPECT_DOUBLE_EQ(splash.vmem_spill_rate, 13457.0 / 15135.0);
  EXPECT_DOUBLE_EQ(splash.vmem_fill_rate, 14679.0 / 15135.0);
  EXPECT_DOUBLE_EQ(splash.smem_spill_rate, 15.0 / 15135.0);
  // The two <no-hlo-instruction> blocks: SMEM_SPILL_COUNT (1/187) and (0/7).
  // Rates tie at 0 for the other two rows: by kernel name ('<' sorts before 'i').
  const store::SpillRateRow& none = (*rows)[1];
  EXPECT_EQ(none.kernel, "<no-hlo-instruction>");
  EXPECT_EQ((*rows)[2].kernel, "iota.1");
  EXPECT_EQ(none.smem_spills, 1);
  EXPECT_EQ(none.bundles, 187 + 7);
  EXPECT_DOUBLE_EQ(none.smem_spill_rate, 1.0 / 194.0);
  EXPECT_EQ(none.vmem_spill_rate, 0);
}

TEST_F(SeedRunQueries, SpillRatesAcrossRunsLimitAndKernelPattern) {
  store::SpillQuery query;
  query.limit = 2;
  auto rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  // Equal rates in every run: the newest run first.
  EXPECT_EQ(RunNames(*rows), (std::vector<std::string>{"nightly-3", "nightly-2"}));
  EXPECT_EQ((*rows)[0].kernel, "splash_mha_fwd_08d1d988.1");

  query.limit = -1;
  rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 9u);  // 3 kernels × 3 runs

  query.kernel_pattern = "iota*";
  rows = store::SpillRates(*db_, query);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  for (const auto& r : *rows) {
    EXPECT_EQ(r.kernel, "iota.1");
    EXPECT_EQ(r.bundles, 132);  // ` - VMEM_SPILL_COUNT: (0/132)`
    EXPECT_EQ(r.vmem_spills, 0);
  }

  query.kernel_pattern = "";
  query.run = "nightly-7";
  auto missing = store::SpillRates(*db_, query);
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("nightly-7"), std::string::npos);
}

// The top N is cut at the N-th rate pair before the rows are joined and sorted (store/query/queries.cc): with
// every kind of tie the seeds give (equal rates across the three runs, zero rates within a run), each limit
// must return exactly the first N rows of the unlimited answer.
TEST_F(SeedRunQueries, SpillRatesTopNIsThePrefixOfTheWholeOrder) {
  auto key = [](const store::SpillRateRow& r) { return std::make_tuple(r.run_name, r.module_name, r.kernel); };
  for (const char* pattern : {"", "*", "iota*"}) {
    for (const char* run : {"", "nightly-2"}) {
      store::SpillQuery query;
      query.kernel_pattern = pattern;
      query.run = run;
      auto all = store::SpillRates(*db_, query);
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      ASSERT_FALSE(all->empty());
      for (int64_t n = 1; n <= static_cast<int64_t>(all->size()) + 1; ++n) {
        query.limit = n;
        auto top = store::SpillRates(*db_, query);
        ASSERT_TRUE(top.ok()) << top.status().ToString();
        const size_t expected = std::min(all->size(), static_cast<size_t>(n));
        ASSERT_EQ(top->size(), expected) << "pattern '" << pattern << "' run '" << run << "' limit " << n;
        for (size_t i = 0; i < expected; ++i) {
          EXPECT_EQ(key((*top)[i]), key((*all)[i])) << "pattern '" << pattern << "' limit " << n << " row " << i;
        }
      }
    }
  }
}

// --- TopBuffers ----------------------------------------------------------------------------------------

TEST_F(SeedRunQueries, TopBuffersOfSeed000) {
  auto top = store::TopBuffers(*db_, "nightly-1", kSplash, -1);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  // The module answered, as its file name and dump say: module_0001 after optimizations, in the run root,
  // its peak the sum of its peak list at `Live ranges at 6 (peak):`.
  EXPECT_EQ(top->module, kSplash);
  EXPECT_EQ(top->stage, "after_optimizations");
  EXPECT_EQ(top->xla_module_id, 1);
  EXPECT_EQ(top->folder, "");
  EXPECT_EQ(top->peak_bytes, PeakListBytes(ReadFile(SeedFile("000"))));
  EXPECT_EQ(top->peak_time, 6);
  // `Live ranges at 6 (peak):` lists 11 buffers; the four largest are 4194304 bytes.
  ASSERT_EQ(top->buffers.size(), 11u);
  int64_t sum = 0;
  for (const auto& b : top->buffers) sum += b.logical_bytes;
  EXPECT_EQ(sum, 18612288);  // the last cumulative
  for (int i = 0; i < 4; ++i) EXPECT_EQ(top->buffers[i].logical_bytes, 4194304) << i;
  EXPECT_EQ(top->buffers[4].logical_bytes, 1048576);
  // Equal sizes keep XLA's order.
  EXPECT_EQ(top->buffers[0].instruction, "Arg_0.1");
  EXPECT_EQ(top->buffers[0].op_name, "q");
  const store::TopBuffer& out = top->buffers[3];
  EXPECT_EQ(out.ordinal, 3);
  EXPECT_EQ(out.instruction, "splash_mha_fwd_e9701070.1");
  EXPECT_EQ(out.shape_index, "{3}");
  EXPECT_EQ(out.value_id, 10);
  EXPECT_EQ(out.allocation_index, 1);
  EXPECT_EQ(out.size_bytes, 4194304);
  EXPECT_EQ(out.shape, "bf16[8,2048,128]{2,1,0:T(8,128)(2,1)}");
  EXPECT_EQ(out.opcode, "custom-call");
  EXPECT_EQ(out.op_name,
            "jit(splash_attention_kernel)/jit(main)/splash_attention_kernel/splash_kernel_b512_h8_s2048/"
            "jit(_splash_attention)/splash_mha_fwd_e9701070/pallas_call");
  EXPECT_EQ(out.source_line, 1100);
  EXPECT_NE(out.source_file.find("splash_attention_kernel.py"), std::string::npos);
  EXPECT_EQ(out.live_start, 6);
  EXPECT_EQ(out.live_end, 8);
  // The two constants: 16 logical bytes at the peak, 512 padded bytes in their allocations.
  EXPECT_EQ(top->buffers[10].instruction, "constant.5");
  EXPECT_EQ(top->buffers[10].logical_bytes, 16);
  EXPECT_EQ(top->buffers[10].size_bytes, 512);

  auto three = store::TopBuffers(*db_, "nightly-1", kSplash, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->buffers.size(), 3u);
}

TEST_F(SeedRunQueries, TopBuffersPicksTheModuleAndNamesWhatIsMissing) {
  // Three modules share the splash kernel's name in nightly-1; the one with a peak list is used, or the one
  // asked for by xla_module_id (module_0004 is HLO text only: no peak list, no rows).
  auto by_id = store::TopBuffers(*db_, "nightly-1", kSplash, -1, "after_optimizations", 4);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_TRUE(by_id->buffers.empty());
  auto by_stage = store::TopBuffers(*db_, "nightly-1", kSplash, -1, "after_optimizations", 1);
  ASSERT_TRUE(by_stage.ok());
  EXPECT_EQ(by_stage->buffers.size(), 11u);
  // nightly-2 holds seed 002 under that name: its largest peak buffer is fusion.5{1}.
  auto two = store::TopBuffers(*db_, "nightly-2", kSplash, 1);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->buffers.size(), 1u);
  EXPECT_EQ(two->buffers[0].instruction, "fusion.5");
  EXPECT_EQ(two->buffers[0].shape_index, "{1}");
  EXPECT_EQ(two->buffers[0].size_bytes, 134217728);

  auto no_module = store::TopBuffers(*db_, "nightly-1", "jit_missing", 5);
  ASSERT_FALSE(no_module.ok());
  EXPECT_EQ(no_module.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_module.status().message().find("jit_missing"), std::string::npos);
  EXPECT_NE(no_module.status().message().find("nightly-1"), std::string::npos);
  auto no_id = store::TopBuffers(*db_, "nightly-1", kSplash, 5, "", 7);
  EXPECT_EQ(no_id.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_id.status().message().find("xla_module_id 7"), std::string::npos);
  auto no_run = store::TopBuffers(*db_, "nightly-0", kSplash, 5);
  EXPECT_EQ(no_run.status().code(), Status::Code::kNotFound);
  EXPECT_NE(no_run.status().message().find("nightly-0"), std::string::npos);
}

// A page token is a position in the newest-first order: a run ingested between two pages does not shift
// or repeat what the next page returns.
TEST(ListRunsPaging, NewRunsDoNotShiftTheNextPage) {
  TempDir tmp;
  std::string db_path = tmp / "x.db";
  MakeSeedRun(tmp / "seed");
  for (int i = 0; i < 3; ++i) {
    Ingest(db_path, tmp / "seed", RunOptions("run-" + std::to_string(i), kNov1Us + i * kDayUs, {}));
  }
  auto db = OpenOrDie(db_path);
  ASSERT_NE(db, nullptr);
  store::RunFilter filter;
  filter.page_size = 1;
  auto first = store::ListRuns(*db, filter);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(RunNames(first->runs), (std::vector<std::string>{"run-2"}));
  Ingest(db_path, tmp / "seed", RunOptions("run-new", kNov1Us + 9 * kDayUs, {}));
  Ingest(db_path, tmp / "seed", RunOptions("run-tie", kNov1Us + 1 * kDayUs, {}));  // same time as run-1
  filter.page_token = first->next_page_token;
  filter.page_size = 10;
  auto rest = store::ListRuns(*db, filter);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  // Equal times order by run_id desc: run-tie (ingested last) before run-1.
  EXPECT_EQ(RunNames(rest->runs), (std::vector<std::string>{"run-tie", "run-1", "run-0"}));

  // One run per page, through the tie: the token after run-tie still finds run-1 at the same time.
  filter = {};
  filter.page_size = 1;
  std::vector<std::string> all;
  do {
    auto page = store::ListRuns(*db, filter);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& r : page->runs) all.push_back(r.name);
    filter.page_token = page->next_page_token;
    ASSERT_LT(all.size(), 10u);
  } while (!filter.page_token.empty());
  EXPECT_EQ(all, (std::vector<std::string>{"run-new", "run-2", "run-tie", "run-1", "run-0"}));
}

}  // namespace
}  // namespace xladb::testing
