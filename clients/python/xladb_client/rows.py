"""Answers as rows: to_rows() gives a list of dicts, to_pandas() a DataFrame of the same rows and columns.

What becomes a row, by what is given:
  * Query's answer (an iterator or list of QueryResponse): one row per SQL row, keyed by the column names the
    first message carries; a name that repeats (`SELECT a.name, b.name`) gets `.1`, `.2`, … as pandas does.
    Values: int, float, str, bytes (BLOBs, and TEXT that is not UTF-8), None for NULL.
  * A response (a message whose type name ends in Response) with repeated messages (ListRunsResponse.runs,
    PeakMemoryTrendResponse.points, TopBuffersResponse.buffers, SpillRatesResponse.rates, ListModulesResponse
    .modules, CheckRunResponse.modules, …): one row per element of its first repeated message field in proto
    order. `field` names another (CheckRunResponse's "by_name"), or one of any message (IngestJob's "errors").
  * Any other message (Run, IngestJob, DeleteRunResponse), or an iterable of messages (watch_ingest_job's
    stream): one row each.
A message becomes {field name: value} over every field of its type, set or not, in proto order, so all rows have
the same columns: enums by name ("SUCCEEDED"), repeated Labels as {key: value}, other messages as dicts of their
fields, repeated fields as lists, maps as dicts, an unset `optional` field (or oneof member) as None.

Errors: to_rows raises TypeError for something that is not a message or an iterable of messages, ValueError
for a `field` the message does not have; iterating a Query stream raises its grpc.RpcError. to_pandas raises
ImportError naming the packages to install when pandas is missing. Both are pure functions (thread-safe); a
streamed answer can be read only once.
"""
from google.protobuf.message import Message

QUERY_RESPONSE = "xladb.v1.QueryResponse"
LABEL = "xladb.v1.Label"


def to_rows(answer, field=None):
    """The rows of `answer` as a list of {column: value} dicts (see the module docstring)."""
    return table(answer, field)[1]


def to_pandas(answer, field=None):
    """A pandas DataFrame of to_rows(answer, field), its columns in the answer's order (also when it has no rows)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("xladb_client.to_pandas needs pandas: install Debian's python3-pandas "
                          "(or `pip install pandas`); to_rows() gives the same rows without it") from e
    columns, rows = table(answer, field)
    return pandas.DataFrame([list(row.values()) for row in rows], columns=columns)


def table(answer, field=None):
    """(column names, rows as dicts) of an answer."""
    if isinstance(answer, Message):
        if answer.DESCRIPTOR.full_name == QUERY_RESPONSE:
            return _query_table([answer])
        repeated = _repeated_message_field(answer.DESCRIPTOR, field) \
            if field is not None or answer.DESCRIPTOR.name.endswith("Response") else None
        if repeated is not None:
            return _message_table(repeated.message_type, getattr(answer, repeated.name))
        return _message_table(answer.DESCRIPTOR, [answer])
    if field is not None:
        raise ValueError("field= names a field of one response message, not of a stream or list")
    try:
        messages = iter(answer)
    except TypeError:
        raise TypeError(f"to_rows takes a protobuf message or an iterable of them, not {type(answer).__name__}")
    first = next(messages, None)
    if first is None:
        return [], []
    if not isinstance(first, Message):
        raise TypeError(f"to_rows takes protobuf messages, not {type(first).__name__}")
    if first.DESCRIPTOR.full_name == QUERY_RESPONSE:
        return _query_table(_chain(first, messages))
    return _message_table(first.DESCRIPTOR, _chain(first, messages))


def _chain(first, rest):
    yield first
    yield from rest


def _repeated_message_field(descriptor, name):
    if name is not None:
        field = descriptor.fields_by_name.get(name)
        if field is None or not _is_message_list(field):
            raise ValueError(f"{descriptor.name} has no repeated message field {name!r}")
        return field
    return next((f for f in descriptor.fields if _is_message_list(f)), None)


def _is_message_list(field):
    """A repeated message field that is neither a map nor labels (those are one value: a dict)."""
    return (field.label == field.LABEL_REPEATED and field.message_type is not None
            and not field.message_type.GetOptions().map_entry and field.message_type.full_name != LABEL)


def _query_table(responses):
    columns, rows = None, []
    for response in responses:
        if columns is None:
            columns = _unique_names([c.name for c in response.columns])
        for row in response.rows:
            rows.append(dict(zip(columns, (_query_value(v) for v in row.values))))
    return columns or [], rows


def _unique_names(names):
    seen, out = {}, []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if count == 0 else f"{name}.{count}")
    return out


def _query_value(value):
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


def _message_table(descriptor, messages):
    columns = [f.name for f in descriptor.fields]
    return columns, [message_to_dict(m) for m in messages]


def message_to_dict(message):
    """{field name: value} of every field of the message's type, in proto order (see the module docstring)."""
    return {f.name: _field_value(message, f) for f in message.DESCRIPTOR.fields}


def _field_value(message, field):
    value = getattr(message, field.name)
    if field.label == field.LABEL_REPEATED:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            return {k: _single_value(value_field, v) for k, v in value.items()}
        if field.message_type is not None and field.message_type.full_name == LABEL:
            return {label.key: label.value for label in value}
        return [_single_value(field, v) for v in value]
    if field.containing_oneof is not None and not message.HasField(field.name):
        return None  # an unset `optional` field, or a oneof member not chosen
    return _single_value(field, value)


def _single_value(field, value):
    if field.enum_type is not None:
        number = value
        named = field.enum_type.values_by_number.get(number)
        return named.name if named is not None else number
    if field.message_type is not None:
        return message_to_dict(value)
    return value
