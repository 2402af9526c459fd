-- Instructions with their interned parts spelled out.
SELECT r.name AS run, m.name AS module, m.stage, m.xla_module_id, m.folder, i.name, i.computation, i.opcode,
       i.shape, i.op_type, i.op_name, i.source_file, i.source_line, i.fusion_kind, i.custom_call_target, i.is_root,
       i.sequence_index, i.text
FROM instruction_details i
JOIN modules m ON m.module_id = i.module_id
JOIN runs r ON r.run_id = m.run_id
ORDER BY r.name, m.name, m.stage, m.xla_module_id, m.folder, i.name;
