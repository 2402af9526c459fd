-- The buffers live at each module's peak, with what is known about them.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, p.ordinal, p.instruction,
       p.shape_index, p.logical_bytes, p.cumulative_bytes, p.value_id, p.allocation_index, p.size_bytes,
       p.offset_bytes, p.shape, p.opcode, p.op_name, p.source_file, p.source_line, p.live_start, p.live_end
FROM peak_buffer_details p
JOIN modules m ON m.module_id = p.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, p.ordinal;
