// The op templates of one transformer layer as XLA compiles it: the TPU layer (libtpu 2025-05: VMEM weight
// prefetch, a Pallas attention kernel, multi-output MLP fusions) and the GPU layer (CUDA 2025-02 through
// PyTorch/XLA: cuBLAS and Triton GEMMs). SyntheticProgram repeats the layer `layers` times; docs/formats.md
// §7 is what the instruction text imitates. Pure functions of the spec: the same spec gives the same ops.
#ifndef XLADB_BENCH_LAYER_TEMPLATES_H_
#define XLADB_BENCH_LAYER_TEMPLATES_H_

#include <string>
#include <vector>

#include "bench/synthetic_program.h"

namespace xladb::bench {

struct LayerTemplates {
  std::vector<OpTemplate> ops;        // the layer's instructions, in order
  std::vector<OpTemplate> weights;    // the layer's parameters
  std::vector<OpTemplate> constants;
  std::vector<OpTemplate> regions;    // reducer regions, 3 ops each (two parameters, the combiner)
};

// One layer for `spec`'s backend and structure seed; TPU ops point at `source_file` for their source lines.
LayerTemplates BuildLayerTemplates(const ProgramSpec& spec, const std::string& source_file);

// An op's kind, name stem, opcode and shape; the rest as OpTemplate's defaults.
OpTemplate MakeOp(OpKind kind, std::string stem, std::string opcode, Shape shape);

// An entry parameter labelled `label`: on GPU, PyTorch/XLA's device data, with the dynamo bridge's source line.
OpTemplate EntryParameter(const ArrayShape& shape, std::string label, Backend backend);

}  // namespace xladb::bench

#endif  // XLADB_BENCH_LAYER_TEMPLATES_H_
