-- Allocations and padded live peak per module and memory space.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, ms.color, ms.allocation_count,
       ms.total_bytes, ms.live_peak_padded_bytes
FROM module_memory_spaces ms
JOIN modules m ON m.module_id = ms.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, ms.color;
