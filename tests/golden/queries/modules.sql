-- Every module with what it is (identity, fingerprint) and its summary.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, m.backend, m.fingerprint,
       m.fingerprint_source, m.entry_signature, m.identity_key, m.hlo_entry_signature, m.entry_signature_confirmed,
       m.hlo_entry_sharding, m.entry_sharding,
       s.total_bytes, s.allocation_bytes, s.parameter_bytes, s.output_bytes, s.temp_bytes, s.constant_bytes,
       s.thread_local_bytes, s.allocation_count, s.value_count, s.live_range_count, s.schedule_length, s.peak_time,
       s.peak_bytes, s.peak_buffer_count, s.instruction_count, s.stack_trace_peak_bytes, s.live_peak_padded_bytes,
       s.live_peak_padded_time, s.color0_total_bytes
FROM modules m
JOIN runs r ON r.run_id = m.run_id
LEFT JOIN module_summary s ON s.module_id = m.module_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder;
