-- Every HloValue with its slice, shape, positions, uses and live range.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, v.value_id, v.instruction,
       v.shape_index, v.is_phi, v.color, v.allocation_index, v.offset_bytes, v.size_bytes, sh.text AS shape,
       v.positions, v.uses, v.uses_state, v.cross_color, l.live_start, l.live_end
FROM buffer_values v
JOIN modules m ON m.module_id = v.module_id
JOIN runs r ON r.run_id = m.run_id
LEFT JOIN shapes sh ON sh.shape_id = v.shape_id
LEFT JOIN buffer_live_ranges l ON l.module_id = v.module_id AND l.value_id = v.value_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, v.value_id;
