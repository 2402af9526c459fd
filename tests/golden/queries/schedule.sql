-- The flattened schedule with opcodes.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, s.time, s.instruction, s.opcode
FROM instruction_sequence s
JOIN modules m ON m.module_id = s.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, s.time;
