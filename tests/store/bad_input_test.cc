// The bad-input catalog: what xladb does with every kind of broken, hostile or odd input a CI artifact folder
// can hold. Each case ingests a folder (or archive) holding the bad input next to a good file (seed 002 as
// module_0002.jit_train_step) into a database that already holds an earlier run (the seed run), with the real
// DumpIngester and RunWriter on a SQLite file, and checks three things:
//   1. the bad input's own outcome: a recorded error whose reason names the problem, or acceptance (with the
//      exact numbers where the input still carries them);
//   2. the rest of the folder is still ingested: the good neighbour has seed 002's exact numbers;
//   3. earlier data is untouched: the earlier run keeps its row counts, and the database stays consistent
//      (PRAGMA integrity_check, no file left half-written).
// docs/RELIABILITY.md lists these cases; keep the two in step. This file holds the cases of content (empty,
// garbage, NUL bytes, truncation, long lines, odd numbers and bytes); bad_file_system_test.cc and
// bad_archive_test.cc the others, over the fixture of bad_input_fixture.h.
#include "tests/store/bad_input_fixture.h"

namespace xladb::testing {
namespace {

// ---------------------------------------------------------------------------------------------------------
// Empty, garbage, NUL bytes

TEST_F(BadInput, EmptyFileIsCataloguedAsNotIngested) {
  std::string run = NewRun("empty");
  WriteFile(run + "/module_0009.empty.after_optimizations-buffer-assignment.txt", "");
  WriteFile(run + "/notes.txt", "");
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files_by_verdict["not_ingested"], 2);
  EXPECT_TRUE(s.errors.empty());
  FileRow row = File("empty", "module_0009.empty.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(row.verdict, "not_ingested");
  EXPECT_EQ(row.reason, "empty file");
  ExpectNeighbourIngestedAndEarlierUntouched("empty");
}

TEST_F(BadInput, BinaryGarbageIsAnErrorUnderADumpNameAndNotIngestedElsewhere) {
  std::string run = NewRun("garbage");
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>(x >> 24);
  }
  const std::string claimed_path = "module_0009.garbage.after_optimizations-buffer-assignment.txt";
  WriteFile(run + "/" + claimed_path, garbage);
  WriteFile(run + "/blob.bin", garbage);
  WriteFile(run + "/nuls.txt", std::string(4096, '\0'));
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files_by_verdict["error"], 1);
  FileRow claimed = File("garbage", claimed_path);
  EXPECT_EQ(claimed.verdict, "error");
  EXPECT_NE(claimed.reason.find("name says a buffer assignment"), std::string::npos) << claimed.reason;
  EXPECT_NE(claimed.reason.find("binary data"), std::string::npos) << claimed.reason;
  EXPECT_EQ(ModuleAllocations("garbage", claimed_path), 0);
  for (const char* path : {"blob.bin", "nuls.txt"}) {
    FileRow row = File("garbage", path);
    EXPECT_EQ(row.verdict, "not_ingested") << path;
    EXPECT_EQ(row.reason, "binary data") << path;
  }
  ExpectNeighbourIngestedAndEarlierUntouched("garbage");
}

TEST_F(BadInput, NulBytesAreAnErrorInTheHeadAndAWarningPastIt) {
  std::string run = NewRun("nul");
  // NULs inside the `Total bytes used:` line of seed 000, within the 64 KiB the sniffer reads.
  std::string seed = ReadFile(SeedFile("000"));
  size_t at = seed.find("Total bytes used: ");
  ASSERT_NE(at, std::string::npos);
  seed.insert(at + 20, std::string(3, '\0'));
  WriteFile(run + "/" + testing::kSeed000FileName, seed);
  // A zero-filled tail, as a crash leaves in a preallocated file: seed 003 (HLO text, 79 instructions) made
  // longer than the sniffed head by a 100 KB backend_config, then 4096 NULs and no final newline.
  std::string hlo = ReadFile(SeedFile("003"));
  const std::string anchor = "copy(%input.2)";
  at = hlo.find(anchor);
  ASSERT_NE(at, std::string::npos);
  hlo.insert(at + anchor.size(), ", backend_config=\"" + std::string(100000, 'b') + "\"");
  WriteFile(run + "/module_0004.zero_tail.after_optimizations.txt", hlo + std::string(4096, '\0'));
  Ingest(run);

  FileRow head = File("nul", testing::kSeed000FileName);
  EXPECT_EQ(head.verdict, "error");
  EXPECT_NE(head.reason.find("binary data"), std::string::npos) << head.reason;
  EXPECT_EQ(ModuleAllocations("nul", testing::kSeed000FileName), 0);

  FileRow tail = File("nul", "module_0004.zero_tail.after_optimizations.txt");
  EXPECT_EQ(tail.verdict, "ingested") << tail.reason;
  std::string issues = Issues("nul", "module_0004.zero_tail.after_optimizations.txt");
  EXPECT_NE(issues.find("warning: the file holds NUL bytes"), std::string::npos) << issues;
  EXPECT_NE(issues.find("warning: truncated file: no newline at the end"), std::string::npos) << issues;
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instructions WHERE module_id = " + std::to_string(tail.module_id)), 79);
  ExpectNeighbourIngestedAndEarlierUntouched("nul");
}

// ---------------------------------------------------------------------------------------------------------
// Truncation: seeds 000 and 002 cut at every line boundary (every section boundary among them) and in the middle
// of every line: 742 files in one folder.

TEST_F(BadInput, TruncatedAtEveryLineBoundaryAndMidLine) {
  std::string run = NewRun("cuts");
  struct Cut {
    std::string path;
    std::string prefix;
    bool mid_line;
  };
  std::vector<Cut> cuts;
  int id = 1000;
  for (const char* seed_no : {"000", "002"}) {
    const std::string seed = ReadFile(SeedFile(seed_no));
    ASSERT_FALSE(seed.empty());
    for (size_t start = 0; start < seed.size();) {
      size_t nl = seed.find('\n', start);
      if (nl == std::string::npos) nl = seed.size();
      std::vector<std::pair<size_t, bool>> points;
      if (start > 0) points.push_back({start, false});
      if (nl - start >= 2) points.push_back({start + (nl - start) / 2, true});
      for (auto [k, mid] : points) {
        std::string path = "module_" + std::to_string(++id) + ".cut_" + seed_no + "_" + std::to_string(k) +
                           ".after_optimizations-buffer-assignment.txt";
        WriteFile(run + "/" + path, seed.substr(0, k));
        cuts.push_back({path, seed.substr(0, k), mid});
      }
      start = nl + 1;
    }
  }
  ASSERT_EQ(cuts.size(), 742u);
  ingest::IngestSummary s = Ingest(run);
  EXPECT_EQ(s.files, 743);
  // Only the two cuts inside the very first line (`BufferAs`) are not recognisable as buffer assignments.
  EXPECT_EQ(s.files_by_verdict["error"], 2);
  EXPECT_EQ(s.files_by_verdict["ingested"], 741);

  SQLite::Database db = Db();
  int unterminated_warnings = 0;
  for (const Cut& cut : cuts) {
    SCOPED_TRACE(cut.path);
    FileRow row = File("cuts", cut.path);
    // Complete `allocation N:` header lines in the prefix: a truncated file stores exactly those, never a
    // header cut short (it lacks its final ':' and is skipped with a warning).
    int complete_headers = 0;
    for (size_t pos = 0; (pos = cut.prefix.find("\nallocation ", pos)) != std::string::npos; ++pos) {
      if (cut.prefix.find('\n', pos + 1) != std::string::npos) ++complete_headers;
    }
    if (row.verdict == "error") {
      EXPECT_NE(row.reason.find("name says a buffer assignment"), std::string::npos) << row.reason;
      EXPECT_LT(cut.prefix.size(), sizeof("BufferAssignment:"));
      EXPECT_EQ(ModuleAllocations("cuts", cut.path), 0);
      continue;
    }
    ASSERT_EQ(row.verdict, "ingested") << row.reason;
    EXPECT_EQ(ModuleAllocations("cuts", cut.path), complete_headers);
    // A cut inside a line is always flagged; a cut at a line boundary is a shorter file that may be valid.
    const bool flagged = Scalar(db, "SELECT COUNT(*) FROM ingest_issues i JOIN dump_files f USING(file_id) "
                                    "WHERE f.path = " + Quoted(cut.path) +
                                    " AND i.severity = 'warning' AND i.reason LIKE 'truncated file: no newline%'") == 1;
    EXPECT_EQ(flagged, cut.mid_line);
    unterminated_warnings += flagged;
  }
  // 368 mid-line cuts (seed 000 has 120 lines of 2+ bytes, seed 002 248), less the two inside `BufferAssignment:`.
  EXPECT_EQ(unterminated_warnings, 366);
  ExpectNeighbourIngestedAndEarlierUntouched("cuts");
}

// ---------------------------------------------------------------------------------------------------------
// Long lines, odd numbers, odd bytes

TEST_F(BadInput, A64MiBLineIsReadWholeAndA64MiBFirstLineIsRefusedBriefly) {
  std::string run = NewRun("long");
  // Seed 003 (HLO text) with a 64 MiB backend_config on `ROOT %copy.4 = … copy(%input.2)`: one 64 MiB line.
  std::string hlo = ReadFile(SeedFile("003"));
  const std::string anchor = "copy(%input.2)";
  size_t at = hlo.find(anchor);
  ASSERT_NE(at, std::string::npos);
  const std::string config = ", backend_config=\"" + std::string(size_t{64} << 20, 'x') + "\"";
  hlo.insert(at + anchor.size(), config);
  size_t line_start = hlo.rfind('\n', at) + 1;
  const std::string root_prefix = "  ROOT ";
  ASSERT_EQ(hlo.compare(line_start, root_prefix.size(), root_prefix), 0);
  const size_t stored_text_size = hlo.find('\n', at) - line_start - root_prefix.size();
  WriteFile(run + "/module_0004.long_line.after_optimizations.txt", hlo);
  // 64 MiB of one unterminated line under a buffer-assignment name.
  WriteFile(run + "/module_0005.one_line.after_optimizations-buffer-assignment.txt",
            std::string(size_t{64} << 20, 'A'));

  PeakRssProbe rss;
  ASSERT_TRUE(rss.valid()) << "could not reset the peak-RSS mark; this test cannot measure";
  auto start = std::chrono::steady_clock::now();
  Ingest(run);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t growth = rss.growth() / 1024;  // KiB
  RecordProperty("ingest_seconds", std::to_string(seconds));
  RecordProperty("peak_rss_growth_kib", std::to_string(growth));
  std::printf("64 MiB line: ingested in %.1f s; peak RSS %lld KiB above the start\n", seconds,
              static_cast<long long>(growth));
  // The line reader's buffer (128 MiB for a 64 MiB line) plus a few copies of the line on its way to SQLite;
  // bounded by the line, not the folder.
  EXPECT_LT(growth, 1024 * 1024);

  FileRow long_line = File("long", "module_0004.long_line.after_optimizations.txt");
  EXPECT_EQ(long_line.verdict, "ingested") << long_line.reason;
  SQLite::Database db = Db();
  const std::string module = std::to_string(long_line.module_id);
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instructions WHERE module_id = " + module), 79);
  EXPECT_EQ(Scalar(db, "SELECT length(t.text) FROM instructions i JOIN long_text_details t ON t.text_id = i.text_id "
                       "WHERE i.name = 'copy.4' AND i.module_id = " + module),
            static_cast<int64_t>(stored_text_size));

  FileRow one_line = File("long", "module_0005.one_line.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(one_line.verdict, "error");
  EXPECT_NE(one_line.reason.find("unrecognised content"), std::string::npos) << one_line.reason.substr(0, 300);
  EXPECT_LT(one_line.reason.size(), 400u) << "the reason quotes the 64 MiB line";
  ExpectNeighbourIngestedAndEarlierUntouched("long");
}

TEST_F(BadInput, NumbersPastInt64AndNegativeSizesAreReportedAndTheirLinesSkipped) {
  std::string run = NewRun("numbers");
  const std::string seed = ReadFile(SeedFile("000"));
  // `allocation 0: size 512, constant:` is seed 000's line 2; its value line 3 is `(size=512,offset=0)`.
  auto with = [&](const std::string& find, size_t skip, size_t erase, const std::string& insert) {
    std::string t = seed;
    size_t at = t.find(find);
    EXPECT_NE(at, std::string::npos) << find;
    t.replace(at + skip, erase, insert);
    return t;
  };
  const std::string huge_alloc = "module_0011.huge_alloc.after_optimizations-buffer-assignment.txt";
  const std::string huge_total = "module_0012.huge_total.after_optimizations-buffer-assignment.txt";
  const std::string neg_alloc = "module_0013.neg_alloc.after_optimizations-buffer-assignment.txt";
  const std::string neg_value = "module_0014.neg_value.after_optimizations-buffer-assignment.txt";
  WriteFile(run + "/" + huge_alloc, with("allocation 0: size 512,", 19, 3, "99999999999999999999"));
  WriteFile(run + "/" + huge_total, with("Total bytes used: 18629632", 18, 8, "99999999999999999999999"));
  WriteFile(run + "/" + neg_alloc, with("allocation 0: size 512,", 19, 0, "-"));
  WriteFile(run + "/" + neg_value, with("(size=512,", 6, 0, "-"));
  Ingest(run);

  for (const std::string& path : {huge_alloc, huge_total, neg_alloc, neg_value}) {
    EXPECT_EQ(File("numbers", path).verdict, "ingested") << path;
  }
  // The allocation line is skipped (7 of 8 stored) and the total no longer adds up: both said.
  std::string issues = Issues("numbers", huge_alloc);
  EXPECT_NE(issues.find("invariant: allocation size 99999999999999999999 does not fit in int64; line skipped"),
            std::string::npos)
      << issues;
  EXPECT_NE(issues.find("invariant: Total bytes used 18629632 but the 7 allocation sizes sum to 18629120"),
            std::string::npos)
      << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "huge_alloc"), "7 11 18629632 18612288@6");
  issues = Issues("numbers", neg_alloc);
  EXPECT_NE(issues.find("invariant: allocation size -512 is negative; line skipped"), std::string::npos) << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "neg_alloc"), "7 11 18629632 18612288@6");
  // The unreadable total is left unknown (NULL), not stored as a wrong number.
  issues = Issues("numbers", huge_total);
  EXPECT_NE(issues.find("Total bytes used 99999999999999999999999 does not fit in int64; line skipped"),
            std::string::npos)
      << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "huge_total"), "8 11 -1 18612288@6");
  issues = Issues("numbers", neg_value);
  EXPECT_NE(issues.find("invariant: value size -512 is negative; line skipped"), std::string::npos) << issues;
  EXPECT_EQ(ModuleNumbers("numbers", "neg_value"), kSeed000Numbers);
  ExpectNeighbourIngestedAndEarlierUntouched("numbers");
}

TEST_F(BadInput, InvalidUtf8IsStoredByteForByte) {
  std::string run = NewRun("utf8");
  std::string seed = ReadFile(SeedFile("000"));
  size_t at = seed.find("op_name=\"");
  ASSERT_NE(at, std::string::npos);
  seed.insert(at + 9, "\xff\xfe\xc3\x28");  // two bytes never valid in UTF-8, then a broken 2-byte sequence
  WriteFile(run + "/" + std::string(testing::kSeed000FileName), seed);
  Ingest(run);
  FileRow row = File("utf8", testing::kSeed000FileName);
  EXPECT_EQ(row.verdict, "ingested");
  EXPECT_EQ(ModuleNumbers("utf8", "jit_splash_attention_kernel"), kSeed000Numbers);
  SQLite::Database db = Db();
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM instruction_details WHERE module_id = " + std::to_string(row.module_id) +
                           " AND instr(op_name, CAST(X'FFFEC328' AS TEXT)) = 1"),
            1);
  ExpectNeighbourIngestedAndEarlierUntouched("utf8");
}

TEST_F(BadInput, CrlfCopyGivesTheSameNumbersAsTheOriginal) {
  std::string run = NewRun("crlf");
  const std::string seed = ReadFile(SeedFile("000"));
  std::string crlf;
  for (char c : seed) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  WriteFile(run + "/module_0001.original.after_optimizations-buffer-assignment.txt", seed);
  WriteFile(run + "/module_0002.crlf_copy.after_optimizations-buffer-assignment.txt", crlf);
  Ingest(run);
  EXPECT_EQ(ModuleNumbers("crlf", "original"), kSeed000Numbers);
  EXPECT_EQ(ModuleNumbers("crlf", "crlf_copy"), kSeed000Numbers);
  SQLite::Database db = Db();
  auto count = [&](const std::string& table, const std::string& module) {
    return Scalar(db, "SELECT COUNT(*) FROM " + table + " WHERE module_id = (SELECT module_id FROM modules WHERE "
                      "name = '" + module + "' AND run_id = (SELECT run_id FROM runs WHERE name = 'crlf'))");
  };
  for (const char* table : {"allocations", "buffer_values", "live_ranges", "instructions", "peak_buffers"}) {
    EXPECT_EQ(count(table, "crlf_copy"), count(table, "original")) << table;
    EXPECT_GT(count(table, "original"), 0) << table;
  }
  // Not a single '\r' reached the stored text.
  EXPECT_EQ(Scalar(db, "SELECT COUNT(*) FROM buffer_values WHERE instr(instruction, char(13)) > 0 OR "
                       "instr(shape_index, char(13)) > 0"),
            0);
  EXPECT_EQ(Issues("crlf", "module_0002.crlf_copy.after_optimizations-buffer-assignment.txt"),
            Issues("crlf", "module_0001.original.after_optimizations-buffer-assignment.txt"));
  ExpectNeighbourIngestedAndEarlierUntouched("crlf");
}

TEST_F(BadInput, DuplicatedSectionsAreMergedAndFlagged) {
  std::string run = NewRun("dups");
  const std::string seed = ReadFile(SeedFile("000"));
  const size_t values = seed.find("Used values:");
  const size_t live = seed.find("HloLiveRange");
  ASSERT_NE(values, std::string::npos);
  ASSERT_NE(live, std::string::npos);
  // The whole file twice (a log that captured it twice), the Used values section twice, the live range twice.
  WriteFile(run + "/module_0017.whole_twice.after_optimizations-buffer-assignment.txt", seed + seed);
  WriteFile(run + "/module_0018.values_twice.after_optimizations-buffer-assignment.txt",
            seed.substr(0, live) + seed.substr(values, live - values) + seed.substr(live));
  WriteFile(run + "/module_0019.live_range_twice.after_optimizations-buffer-assignment.txt", seed + seed.substr(live));
  Ingest(run);
  for (const char* module : {"whole_twice", "values_twice", "live_range_twice"}) {
    EXPECT_EQ(ModuleNumbers("dups", module), kSeed000Numbers) << module;  // merged by key: nothing counted twice
  }
  // A repeated value block is the same fact again; a repeated file or schedule is flagged.
  EXPECT_EQ(Issues("dups", "module_0018.values_twice.after_optimizations-buffer-assignment.txt"), "");
  std::string issues = Issues("dups", "module_0017.whole_twice.after_optimizations-buffer-assignment.txt");
  EXPECT_NE(issues.find("unknown_line: unrecognised line in peak list: BufferAssignment:"), std::string::npos)
      << issues;
  EXPECT_NE(issues.find("invariant: InstructionSequence entry 8 is printed with time 0"), std::string::npos) << issues;
  issues = Issues("dups", "module_0019.live_range_twice.after_optimizations-buffer-assignment.txt");
  EXPECT_NE(issues.find("invariant: InstructionSequence entry 8 is printed with time 0"), std::string::npos) << issues;
  ExpectNeighbourIngestedAndEarlierUntouched("dups");
}

}  // namespace
}  // namespace xladb::testing
