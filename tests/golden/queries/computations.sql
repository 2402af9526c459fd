-- Computations of HLO module text.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, c.name, c.is_entry,
       c.instruction_count, c.execution_thread
FROM computations c
JOIN modules m ON m.module_id = c.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, c.name;
