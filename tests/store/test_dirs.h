// Temporary folders and example dump folders for store and end-to-end tests.
#ifndef XLADB_TESTS_STORE_TEST_DIRS_H_
#define XLADB_TESTS_STORE_TEST_DIRS_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace xladb::testing {

// A fresh folder under $TMPDIR, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "xladb_test_XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& child) const { return (path_ / child).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string SeedFile(const std::string& number) {
  for (const auto& e : std::filesystem::directory_iterator(std::string(XLADB_TEST_DATA_DIR) + "/seeds")) {
    if (e.path().filename().string().rfind(number + "_", 0) == 0) return e.path().string();
  }
  return {};
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// A dump folder laid out as XLA names files: the five seeds under realistic names.
//   module_0001.jit_splash_attention_kernel.after_optimizations-buffer-assignment.txt   (seed 000)
//   module_0002.jit_train_step.after_optimizations-buffer-assignment.txt                (seed 002)
//   module_0003.SyncTensorsGraph.105.sm_8.0_gpu_after_optimizations-buffer-assignment.txt (seed 004)
//   module_0004.jit_splash_attention_kernel.after_optimizations.txt                     (seed 003)
//   1766453541-jit_splash_attention_kernel-00-hlo-static-bundle-profile.txt             (seed 001)
//   module_0001.jit_splash_attention_kernel.thunk_sequence.txt                          (not ingested)
inline constexpr char kSeed000FileName[] =
    "module_0001.jit_splash_attention_kernel.after_optimizations-buffer-assignment.txt";
inline void MakeSeedRun(const std::string& dir) {
  WriteFile(dir + "/" + kSeed000FileName, ReadFile(SeedFile("000")));
  WriteFile(dir + "/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt", ReadFile(SeedFile("002")));
  WriteFile(dir + "/module_0003.SyncTensorsGraph.105.sm_8.0_gpu_after_optimizations-buffer-assignment.txt",
            ReadFile(SeedFile("004")));
  WriteFile(dir + "/module_0004.jit_splash_attention_kernel.after_optimizations.txt", ReadFile(SeedFile("003")));
  WriteFile(dir + "/1766453541-jit_splash_attention_kernel-00-hlo-static-bundle-profile.txt",
            ReadFile(SeedFile("001")));
  WriteFile(dir + "/module_0001.jit_splash_attention_kernel.thunk_sequence.txt", "Thunk sequence:\n  kernel foo\n");
}

// Seed 000 with iota.1 renamed iota.7 and doubled (value, allocation, peak list and totals edited
// consistently): its buffer pairs with seed 000's iota.1 by op_name and source line, not by name.
inline std::string Seed000WithIotaRenamedAndDoubled() {
  std::string text = ReadFile(SeedFile("000"));
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"iota.1", "iota.7"},        {"1048576", "2097152"},  {"18629632", "19678208"}, {"17825792", "18874368"},
      {"18087936", "19136512"},    {"18350080", "19398656"}, {"18612224", "19660800"}, {"18612256", "19660832"},
      {"18612272", "19660848"},    {"18612288", "19660864"}};
  for (const auto& [from, to] : edits) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

inline std::string CorpusDir() { return XLADB_CORPUS_DIR; }
inline bool HaveCorpus() { return std::filesystem::is_directory(CorpusDir() + "/public"); }

}  // namespace xladb::testing

#endif  // XLADB_TESTS_STORE_TEST_DIRS_H_
