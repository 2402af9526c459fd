-- `allocation N:` lines, every flag.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, a.allocation_index, a.size_bytes,
       a.color, a.is_parameter, a.parameter_number, a.parameter_shape, a.parameter_shape_index, a.is_output,
       a.output_shape, a.is_constant, a.is_thread_local, a.is_maybe_live_out, a.is_preallocated_temp, a.address
FROM allocations a
JOIN modules m ON m.module_id = a.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, a.allocation_index;
