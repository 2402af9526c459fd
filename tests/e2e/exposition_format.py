"""A strict parser of Prometheus's text exposition format 0.0.4, written from the format's specification
(https://prometheus.io/docs/instrumenting/exposition_formats/), independent of xladbd's writer.

parse(text) returns {family name: Family}; it raises FormatError naming the line for anything a Prometheus
server would reject or that the format forbids: a bad metric or label name, a bad escape, a value that is not
a float, a TYPE after the family's samples or given twice, a family's samples not in one group, a sample
twice, histogram buckets without `le`, not cumulative, without +Inf, or whose +Inf bucket differs from
`_count`, and text that does not end with a newline.
"""
import math
import re
from dataclasses import dataclass, field

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


class FormatError(ValueError):
    pass


@dataclass
class Family:
    name: str
    type: str = "untyped"
    help: str = None
    samples: list = field(default_factory=list)  # (sample name, {label: value}, float value)

    def value(self, sample_name=None, **labels):
        """The value of the one sample named `sample_name` (default: the family's name) with exactly `labels`."""
        sample_name = sample_name or self.name
        found = [v for n, l, v in self.samples if n == sample_name and l == labels]
        if len(found) != 1:
            raise KeyError(f"{sample_name}{labels}: {len(found)} samples")
        return found[0]


def _float(text, where):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
        raise FormatError(f"{where}: {text!r} is not a float")
    return float(text)


def _unescape(text, allowed, where):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text) or text[i + 1] not in allowed:
                raise FormatError(f"{where}: bad escape in {text!r}")
            out.append({"\\": "\\", "n": "\n", '"': '"'}[text[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _labels(text, where):
    """{name: value} of `name="value",…` (a trailing comma allowed), and the rest of the line."""
    labels, i = {}, 0
    while True:
        if text[i:i + 1] == "}":
            return labels, text[i + 1:]
        m = LABEL_NAME.match(text, i)
        if not m:
            raise FormatError(f"{where}: bad label name at {text[i:]!r}")
        name = m.group(0)
        if name.startswith("__"):
            raise FormatError(f"{where}: label name {name!r} is reserved")
        i = m.end()
        if text[i:i + 2] != '="':
            raise FormatError(f"{where}: expected =\" after label {name}")
        i += 2
        j = i
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        if j >= len(text):
            raise FormatError(f"{where}: unterminated value of label {name}")
        if name in labels:
            raise FormatError(f"{where}: label {name} twice")
        labels[name] = _unescape(text[i:j], "\\n\"", where)
        i = j + 1
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            raise FormatError(f"{where}: expected , or }} after label {name}")


def _family_of(sample_name, families):
    """The family a sample belongs to: a histogram's _bucket/_sum/_count, else its own name."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = sample_name[: -len(suffix)]
        if sample_name.endswith(suffix) and base in families and families[base].type in ("histogram", "summary"):
            return base
    return sample_name


def _check_histogram(family):
    series = {}
    for name, labels, value in family.samples:
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        s = series.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name == family.name + "_bucket":
            if "le" not in labels:
                raise FormatError(f"{family.name}: a bucket without le")
            s["buckets"].append((_float(labels["le"], family.name), value))
        elif name == family.name + "_sum":
            s["sum"] = value
        elif name == family.name + "_count":
            s["count"] = value
        else:
            raise FormatError(f"{family.name}: sample {name} in a histogram")
    for key, s in series.items():
        bounds = [b for b, _ in s["buckets"]]
        if not bounds or bounds[-1] != math.inf:
            raise FormatError(f"{family.name}{dict(key)}: no +Inf bucket")
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise FormatError(f"{family.name}{dict(key)}: bucket bounds not ascending")
        counts = [c for _, c in s["buckets"]]
        if any(b < a for a, b in zip(counts, counts[1:])):
            raise FormatError(f"{family.name}{dict(key)}: buckets not cumulative: {counts}")
        if s["count"] is None or s["sum"] is None:
            raise FormatError(f"{family.name}{dict(key)}: _sum or _count missing")
        if s["count"] != counts[-1]:
            raise FormatError(f"{family.name}{dict(key)}: _count {s['count']} != +Inf bucket {counts[-1]}")


def parse(text):
    if text and not text.endswith("\n"):
        raise FormatError("the text does not end with a newline")
    families, finished, seen, current = {}, set(), set(), None
    for number, line in enumerate(text.split("\n")[:-1], 1):
        where = f"line {number}"
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                name = parts[2]
                if not METRIC_NAME.fullmatch(name):
                    raise FormatError(f"{where}: bad metric name {name!r}")
                if name in finished:
                    raise FormatError(f"{where}: family {name} is not in one group")
                f = families.setdefault(name, Family(name))
                if current is not None and current != name:
                    finished.add(current)
                current = name
                if parts[1] == "HELP":
                    if f.help is not None:
                        raise FormatError(f"{where}: HELP of {name} twice")
                    f.help = _unescape(parts[3] if len(parts) > 3 else "", "\\n", where)
                else:
                    kind = parts[3] if len(parts) > 3 else ""
                    if kind not in TYPES:
                        raise FormatError(f"{where}: unknown type {kind!r}")
                    if f.samples or getattr(f, "_typed", False):
                        raise FormatError(f"{where}: TYPE of {name} after its samples, or twice")
                    f.type, f._typed = kind, True
            continue
        m = METRIC_NAME.match(line)
        if not m:
            raise FormatError(f"{where}: bad metric name in {line!r}")
        name, rest = m.group(0), line[m.end():]
        labels = {}
        if rest.startswith("{"):
            labels, rest = _labels(rest[1:], where)
        fields = rest.split(" ")
        if len(fields) not in (2, 3) or fields[0] != "":
            raise FormatError(f"{where}: expected ' value [timestamp]' in {line!r}")
        value = _float(fields[1], where)
        if len(fields) == 3 and not re.fullmatch(r"-?\d+", fields[2]):
            raise FormatError(f"{where}: bad timestamp {fields[2]!r}")
        family_name = _family_of(name, families)
        if family_name in finished:
            raise FormatError(f"{where}: family {family_name} is not in one group")
        if current is not None and current != family_name:
            finished.add(current)
        current = family_name
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            raise FormatError(f"{where}: sample {name}{labels} twice")
        seen.add(key)
        f = families.setdefault(family_name, Family(family_name))
        if f.type == "counter" and (value < 0 or math.isnan(value)):
            raise FormatError(f"{where}: counter {name} is {value}")
        f.samples.append((name, labels, value))
    for f in families.values():
        if f.type == "histogram":
            _check_histogram(f)
    return families
