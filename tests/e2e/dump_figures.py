"""What a dump file prints, read by small parsers of this file's own (written from docs/formats.md, never the
project's code), as claims on a golden case's expected CSVs: test_golden.GoldenCasesAgreeWithTheirDumps checks
them."""

# The per-format cases' expected CSVs against the dumps themselves. Small parsers of this file's own, written from
# docs/formats.md (never the project's code), read each dump file of a case and state what the store must hold:
# claims `(query, key, want, where)` (the row of `query`.csv whose columns equal `key` has the columns of `want`)
# and counts `(query, key, n, where)` (that many rows match `key`), so a row too many is caught as well as a wrong
# figure. Every value is compared as the CSV text.

def human_bytes(text):
    """tsl's HumanReadableNumBytes (docs/formats.md §6.4) back to bytes: `1.50MiB` -> 1572864."""
    from decimal import Decimal
    import re
    m = re.fullmatch(r"([\d.]+)(B|KiB|MiB|GiB|TiB)", text)
    return int(Decimal(m.group(1)) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(m.group(2)))


def percent_e9(text):
    """`33.2` (a printed percentage) in billionths, as the queries print it: 33200000000."""
    from decimal import Decimal
    return str(int(Decimal(text) * 1000000000))


def dump_kind(text):
    """What a dump file is, by its first line (docs/formats.md §2-§9), in dump_files.kind's words."""
    first = text.lstrip("\n").split("\n", 1)[0]
    if first.startswith("BufferAssignment:"):
        return "buffer_assignment"
    if first.startswith("Total bytes used:") and "\nUsed values:" in text:
        return "buffer_assignment_values"
    if first.startswith("Total bytes used:") or first.startswith("Memory Space:"):
        return "memory_usage_report"
    if first.startswith("HloLiveRange"):
        return "live_range"
    if first.startswith("HloModule "):
        return "hlo_module"
    if first.startswith("HLO: "):
        return "tpu_bundle_profile"
    if first.startswith("== CAPACTIY:"):
        return "tpu_per_bundle_utilization"
    if "BufferAssignment OOM Debugging." in text:
        return "oom_report"
    return None


class DumpFigures:
    """What one dump file prints, as claims and counts on its case's expected CSVs."""

    def __init__(self, where):
        self.where, self.claims, self.counts, self.stack_nodes = where, [], [], 0

    def claim(self, query, key, **want):
        self.claims.append((query, key, {k: str(v) for k, v in want.items()}, self.where))

    def count(self, query, key, n):
        self.counts.append((query, key, n, self.where))

    # §2-§4: a buffer assignment, a values file or a live-range file (any of them may hold any part).
    def buffer_assignment(self, text, module):
        import json
        import re
        allocations, values, cross, used, uses = [], [], {}, [], None
        section, peak, live, sequence = None, [], [], 0
        for line in text.split("\n"):
            a = re.match(r"allocation (\d+): (?:(0x[0-9a-f]+), )?size (\d+)(.*):$", line)
            if a:
                flags = a.group(4)
                bare = re.sub(r"\|[^|]*\|", "||", flags)  # §2.2: shapes hold `, `
                parameter = re.search(r", parameter (\d+)(?:, shape \|([^|]*)\|)? at ShapeIndex (\{[^}]*\})", flags)
                output = re.search(r", output shape is \|([^|]*)\|", flags)
                color = re.search(r", color (\d+)", bare)
                words = [w.strip() for w in bare.split(",")]
                allocations.append((int(a.group(1)), int(a.group(3)), int(color.group(1)) if color else 0))
                self.claim("allocations", dict(module, allocation_index=a.group(1)), size_bytes=a.group(3),
                           color=allocations[-1][2], address=a.group(2) or "",
                           is_parameter=int(bool(parameter)), parameter_number=parameter.group(1) if parameter else "",
                           parameter_shape=(parameter.group(2) or "") if parameter else "",
                           parameter_shape_index=parameter.group(3) if parameter else "",
                           is_output=int(bool(output)), output_shape=output.group(1) if output else "",
                           is_constant=int("constant" in words), is_thread_local=int("thread-local" in words),
                           is_maybe_live_out=int("maybe-live-out" in words),
                           is_preallocated_temp=int("preallocated-temp" in words))
                continue
            v = re.match(r" value: <(\d+) %?(\S+?)(\{[^}]*\})? @(\d+)> \(size=(\d+),offset=(\d+)\): (.*)$", line)
            if v:
                values.append(v.group(1))
                self.claim("values", dict(module, value_id=v.group(1)), instruction=v.group(2),
                           shape_index=v.group(3) or "{}", color=v.group(4), allocation_index=allocations[-1][0],
                           size_bytes=v.group(5), offset_bytes=v.group(6), shape=v.group(7))
                continue
            c = re.match(r"  value: <(\d+) .*> \(color=(\d+)\)$", line)  # §2.3, 2026-06+
            if c:
                cross[c.group(1)] = c.group(2)
                continue
            t = re.match(r"Total bytes used: (\d+)", line)
            if t:
                self.claim("modules", module, total_bytes=t.group(1))
                continue
            u = re.match(r"<(\d+) \S+ @\d+>$", line)  # §2.5: one Used-values block per value
            if u:
                uses = []
                used.append((u.group(1), uses))
                continue
            if uses is not None:
                if line == " uses:":
                    section = "uses"
                elif line.startswith(" ") and not line.startswith("  "):
                    section = None
                elif section == "uses" and line == "  (none)":
                    used[-1] = (used[-1][0], None)
                elif section == "uses":
                    w = re.match(r"  (\S+), operand (\d+)(?: (\{[^}]*\}))?$", line)
                    if w:
                        uses.append([w.group(1), int(w.group(2)), w.group(3) or "{}"])
            m = re.match(r"HloLiveRange \(max (\d+)\):", line)
            if m:
                uses = None
                self.claim("modules", module, schedule_length=m.group(1))
                continue
            if line.strip() in ("InstructionSequence:", "BufferLiveRange:"):
                section = line.strip()
                continue
            m = re.match(r"  Live ranges at (\d+) \(peak\):", line)
            if m:
                section = "peak"
                self.claim("modules", module, peak_time=m.group(1))
                continue
            m = re.match(r"  Stack trace breakdown for peak usage: ([\d ]+) bytes", line)
            if m:
                section = "stack"
                self.claim("modules", module, stack_trace_peak_bytes=m.group(1).replace(" ", ""))
                continue
            if section == "InstructionSequence:":
                m = re.match(r"    (\d+):(\S+)$", line)
                if m:
                    self.claim("schedule", dict(module, time=m.group(1)), instruction=m.group(2))
                    sequence += 1
            elif section == "BufferLiveRange:":
                m = re.match(r"    (\S+?)(\{[^}]*\}):(\d+)-(\d+)$", line)
                if m:
                    self.claim("values", dict(module, instruction=m.group(1), shape_index=m.group(2)),
                               live_start=m.group(3), live_end=m.group(4))
                    live.append(m.group(1))
            elif section == "peak":
                m = re.match(r"    (\S+?)(\{[^}]*\})?: (\d+) bytes(?: \(cumulative: (\d+) bytes\))?$", line)
                if m:
                    peak.append(int(m.group(3)))
                    want = dict(instruction=m.group(1), logical_bytes=m.group(3), cumulative_bytes=m.group(4) or "")
                    if m.group(2):
                        want["shape_index"] = m.group(2)
                    self.claim("peak_buffers", dict(module, ordinal=len(peak) - 1), **want)
            elif section == "stack":
                m = re.match(r"^([ │├└─]*)(.*) \(([\d.]+)%, total: ([\d ]+) bytes, current: ([\d ]+) bytes, "
                             r"remaining: ([\d ]+) bytes\)$", line)
                if m:
                    self.claim("stack_traces", dict(module, ordinal=self.stack_nodes), depth=(len(m.group(1)) - 4) // 4,
                               name=m.group(2), percent_e9=percent_e9(m.group(3)), total_bytes=m.group(4).replace(" ", ""),
                               current_bytes=m.group(5).replace(" ", ""), remaining_bytes=m.group(6).replace(" ", ""))
                    self.stack_nodes += 1
        for value_id, listed in used:
            self.claim("values", dict(module, value_id=value_id), uses_state="listed" if listed is not None else "none",
                       uses=json.dumps(listed or [], separators=(",", ":")))
        if live:
            self.claim("modules", module, live_range_count=len(live))
        if sequence:
            self.count("schedule", module, sequence)
        if peak:
            self.claim("modules", module, peak_bytes=sum(peak), peak_buffer_count=len(peak))
            self.count("peak_buffers", module, len(peak))
        if self.stack_nodes:
            self.count("stack_traces", module, self.stack_nodes)
        if allocations:
            self.claim("modules", module, allocation_count=len(allocations),
                       allocation_bytes=sum(s for _, s, _ in allocations),
                       color0_total_bytes=sum(s for _, s, c in allocations if c == 0), value_count=len(values))
            self.count("allocations", module, len(allocations))
            self.count("values", module, len(values))
            for color in sorted({c for _, _, c in allocations}):
                self.claim("memory_spaces", dict(module, color=color),
                           allocation_count=sum(1 for _, _, c in allocations if c == color),
                           total_bytes=sum(s for _, s, c in allocations if c == color))
            for value_id in values:
                self.claim("values", dict(module, value_id=value_id), cross_color=cross.get(value_id, ""))

    # §7: HLO module text.
    def hlo_module(self, text, module):
        import re
        computation, total, computations = None, 0, 0
        for line in text.split("\n"):
            head = re.match(r"(ENTRY )?%?([^\s(]+) (?:\((.*)\) -> (.*) )?\{$", line)
            if head and computation is None:
                computation, entry, count = head.group(2), bool(head.group(1)), 0
                if entry and head.group(3) is not None:
                    shapes = [p.split(": ", 1)[1] for p in split_top(head.group(3))]
                    self.claim("modules", module, hlo_entry_signature=f"({', '.join(shapes)}) -> {head.group(4)}")
                continue
            end = re.match(r'\}(?:, execution_thread="([^"]*)")?$', line)
            if end and computation is not None:
                self.claim("computations", dict(module, name=computation), is_entry=int(entry), instruction_count=count,
                           execution_thread=end.group(1) or "")
                computation, computations = None, computations + 1
                continue
            i = re.match(r"  (ROOT )?(%?([^\s=]+) = (.*))$", line)
            if i and computation is not None:
                shape, rest = split_shape(i.group(4))
                want = dict(computation=computation, opcode=rest.split("(", 1)[0], shape=shape,
                            is_root=int(bool(i.group(1))), sequence_index=count, text=i.group(2))
                meta = re.search(r"metadata=\{([^}]*)\}", i.group(4))
                meta = meta.group(1) if meta else ""
                fields = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)', meta))
                if "\\" not in meta:  # escaped quotes: left to the parser's own tests
                    want.update(op_type=fields.get("op_type", "").strip('"'), op_name=fields.get("op_name", "").strip('"'),
                                source_file=fields.get("source_file", "").strip('"'),
                                source_line=fields.get("source_line", ""))
                self.claim("instructions", dict(module, name=i.group(3)), **want)
                count, total = count + 1, total + 1
        self.claim("modules", module, instruction_count=total)
        self.count("instructions", module, total)
        self.count("computations", module, computations)

    # §5: memory-usage report, V1 and V2.
    def memory_usage_report(self, text, file):
        import re
        rows, totals, space, name, table, allocation, section = 0, 0, "", "", -1, "", None
        row = re.compile(r"\s*([\d.]+\w+)\(\s*([\d.]+)%\);\s*([\d.]+\w+);\s*(.*)$")
        for line in text.split("\n"):
            m = re.match(r"Total bytes used: (\d+)", line) or re.match(r"Total bytes: (\d+)", line)
            if m:
                key = dict(file, part="total") if not space else dict(file, part="total", memory_space=space)
                self.claim("memory_reports", key, cumulative_bytes_approx=m.group(1))
                totals += 1
                continue
            m = re.match(r"Memory Space: (\S+) \(color=(\d+)\)", line)
            if m:
                name, space, table, section = m.group(1), m.group(2), -1, "memory_space"
                continue
            if line == "Allocations sorted by size:":
                section = "allocations_by_size"
                continue
            if line == "Allocations sorted by size with their values:":
                section = "allocation_values"
                continue
            m = re.match(r"allocation (\d+): ", line)
            if m and section == "allocation_values":
                allocation = m.group(1)
                continue
            if line.strip().startswith("cumulative_size; ") and section != "allocations_by_size":
                table += 1  # §5.3: one table per allocation (V2: numbered within its memory space)
                continue
            m = row.match(line)
            if not m or section is None:
                continue
            want = dict(section=section, cumulative_bytes_approx=human_bytes(m.group(1)),
                        percent_e9=percent_e9(m.group(2)))
            a = re.match(r"(allocation (\d+): size ([\d.]+\w+).*)$", m.group(4))
            if section == "allocations_by_size" and a:
                want.update(allocation_index=a.group(2), remaining_bytes_approx=human_bytes(m.group(3)),
                            size_bytes_approx=human_bytes(a.group(3)), shapes=a.group(1))
            else:
                v = re.match(r"(\d+);\s*(\d+); (.*)$", m.group(4))
                if not v:
                    continue
                want.update(size_bytes_approx=human_bytes(m.group(3)), offset_bytes=v.group(1), value_count=v.group(2),
                            shapes=v.group(3), table_ordinal=table, remaining_bytes_approx="")
                if section == "memory_space":
                    want.update(memory_space=space, memory_space_name=name, allocation_index="")
                else:
                    want.update(allocation_index=allocation)
            self.claim("memory_reports", dict(file, part="row", ordinal=rows), **want)
            rows += 1
        self.count("memory_reports", dict(file, part="row"), rows)
        self.count("memory_reports", dict(file, part="total"), totals)

    # §9: the OOM debugging report and the two log lines around it.
    def oom_report(self, text, file):
        import re
        unescape = lambda s: re.sub(r"\\(.)", r"\1", s)
        stats, buffers, buffer = 0, 0, None
        m = re.search(r"Out of memory while trying to allocate (\d+) bytes\.", text)
        if m:
            self.claim("oom", dict(file, part="stat", label="failed allocation"), bytes_approx=m.group(1),
                       bytes_text=m.group(1) + " bytes")
            stats += 1
        m = re.search(r"^Limit:\s+(\d+)$", text, re.M)
        if m:
            self.claim("oom", dict(file, part="stat", label="memory limit"), bytes_approx=m.group(1),
                       bytes_text=m.group(1) + " bytes")
            stats += 1
        section = None
        for line in text.split("\n"):
            if line == "BufferAssignment stats:":
                section = "stats"
            elif line == "Peak buffers:":
                section = "buffers"
            elif section == "stats":
                s = re.match(r"\s+([a-z_ ]+): +([\d.]+\w+)(?: \(([\d.]+)%\))?$", line)
                if s:
                    self.claim("oom", dict(file, part="stat", label=s.group(1)), bytes_approx=human_bytes(s.group(2)),
                               bytes_text=s.group(2), percent_e9=percent_e9(s.group(3)) if s.group(3) else "")
                    stats += 1
            elif section == "buffers":
                b = re.match(r"\tBuffer (\d+):$", line)
                if b:
                    buffer, buffers = dict(file, part="buffer", buffer_number=b.group(1)), buffers + 1
                    continue
                f = re.match(r"\t\t([^:]+): (.*)$", line)
                if not f or buffer is None:
                    continue
                field, value = f.groups()
                if field == "Size":
                    self.claim("oom", buffer, bytes_approx=human_bytes(value), bytes_text=value)
                elif field == "Operator":
                    attrs = {k: unescape(v.strip('"')) for k, v in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\d+)', value)}
                    self.claim("oom", buffer, op_name=attrs.get("op_name", ""),
                               source=attrs["source_file"] + ":" + attrs["source_line"] if "source_file" in attrs else "")
                elif field == "XLA Label":
                    self.claim("oom", buffer, xla_label=value)
                elif field == "Shape":
                    self.claim("oom", buffer, shape=value, is_entry_parameter=0)
                elif field == "Entry Parameter Subshape":
                    self.claim("oom", buffer, shape=value, is_entry_parameter=1)
        self.count("oom", dict(file, part="stat"), stats)
        self.count("oom", dict(file, part="buffer"), buffers)

    # §8: libtpu's static bundle profile.
    def tpu_bundle_profile(self, text, file):
        import re
        from decimal import Decimal
        block, kernel, counters = -1, None, 0
        for line in text.split("\n"):
            h = re.match(r"HLO: (.*)$", line)
            if h:
                block += 1
                n = re.match(r"%?([^\s=]+) = ", h.group(1))
                kernel = n.group(1) if n else h.group(1)
                continue
            c = re.match(r" - (.+): \((\d+)/(\d+)\) - (\S+)$", line)
            if c:
                self.claim("utilization", dict(file, part="counter", block_ordinal=block, kernel=kernel, counter=c.group(1)),
                           numerator=c.group(2), denominator=c.group(3), ratio_text=c.group(4),
                           ratio_e9=int((Decimal(c.group(4)) * 1000000000).to_integral_value()))
                counters += 1
        self.count("utilization", dict(file, part="counter"), counters)

    # §8: libtpu's per-bundle utilization: a unit's use is its column's sum over its capacity times the bundles.
    def tpu_per_bundle_utilization(self, text, file):
        lines = text.split("\n")
        units = [u.strip() for u in lines[lines.index("== CAPACTIY:") + 1].split("|")]
        capacity = [int(c) for c in lines[lines.index("== CAPACTIY:") + 2].split()]
        bundles = [[int(x) for x in l.split()] for l in lines[lines.index("== UTILIZATION:") + 1:] if l.strip()]
        for k, unit in enumerate(units):
            used, available = sum(b[k] for b in bundles), capacity[k] * len(bundles)
            self.claim("utilization", dict(file, part="counter", counter=unit), numerator=used, denominator=available,
                       ratio_e9=(2 * used * 1000000000 + available) // (2 * available), ratio_text=f"{used / available:g}")
        self.count("utilization", dict(file, part="counter"), len(units))


def split_top(text):
    """`a: f32[2,3], b: (f32[], s32[])` split at its top-level `, `."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "([{" and 1 or c in ")]}" and -1 or 0
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()] if text.strip() else parts


def split_shape(text):
    """An instruction's `<shape> <opcode>(...)...` split after the shape (which may hold spaces inside brackets)."""
    depth = 0
    for i, c in enumerate(text):
        depth += c in "([{" and 1 or c in ")]}" and -1 or 0
        if c == " " and depth == 0:
            return text[:i], text[i + 1:]
    return text, ""
