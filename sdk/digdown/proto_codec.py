"""Fast plain dict <-> protobuf message conversion, for the engine's data shapes.

`digdown.wire` used `google.protobuf.json_format.ParseDict` / `MessageToDict`,
which walk a message in generic JSON-oriented Python code: about 500 µs and
300 µs for one observation, on every decision of a match. The two converters
here give the same results much faster:

- `dict_to_message(d, cls)` is the message constructor, `cls(**d)` (about 20x
  faster than ParseDict): upb's C code walks the nested dicts and lists,
  refuses unknown keys at any depth, skips `None` values like ParseDict and
  gives an empty sub-dict presence like ParseDict. When the constructor
  refuses a dict, ParseDict gets the same dict and has the last word: either it
  accepts it (ProtoJSON spellings such as camelCase keys, numbers as strings or
  5.0 for an int) and its message is returned, or its error is raised, which
  names the offending field and where it is - exactly what wire did before.
  Accepted by the constructor but refused by ParseDict (the only differences,
  tests/sdk/test_wire.py checks that on broken dicts): an int for a
  `bool`, another iterable than a list for a repeated field (a str letter by
  letter, a dict's keys), a list of pairs for a map, bytes for a string. The
  engine emits none of them: the same tests parse every dict of real games with
  ParseDict too, and compare.
- `message_to_dict(msg)` reads the fields along a per-message plan built once
  from the descriptor (about 5x faster than MessageToDict). It gives what
  `MessageToDict(msg, preserving_proto_field_name=True,
  always_print_fields_with_no_presence=True)` gives, except that 64-bit ints
  stay ints (ProtoJSON writes them as strings; the engine's dicts hold ints):
  fields without presence always appear (defaults included, empty lists and
  maps too); `optional` scalars, message fields and oneof members only when
  set. Keys come in field order (MessageToDict puts the fields that hold their
  default after the others; dict equality does not see the difference).

Both take the fast path only for messages built of what our protos use
(integers, bools, strings, nested messages, maps from strings to those
scalars; for parsing, no oneof of two or more fields). Any other message
(floats, enums, bytes, well-known types, ...) goes through json_format, so its
results stay the reference ones. `reference_dict_to_message` /
`reference_message_to_dict` are those json_format conversions, kept for that
and for tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)

# What the fast paths handle; anything else falls back to json_format.
_INT64_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_PLAIN_TYPES = _INT64_TYPES | {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_BOOL,
    FieldDescriptor.TYPE_STRING,
}

# Field kinds of a plan.
_SCALAR, _OPTIONAL, _REPEATED_SCALAR, _MAP, _MESSAGE, _REPEATED_MESSAGE = range(6)

# A plan: (field name, kind, plan of the field's message type or None) in field order.
Plan = tuple[tuple[str, int, Any], ...]
_plans: dict[Descriptor, Plan | None] = {}  # None: not for the fast path
_parse_ok: dict[Descriptor, bool] = {}


def is_repeated(field: FieldDescriptor) -> bool:
    """Repeated or not, across protobuf versions (`label` is deprecated in newer ones)."""
    is_rep = getattr(field, "is_repeated", None)
    if is_rep is not None:
        return bool(is_rep)
    return bool(getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED)


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _plan(desc: Descriptor) -> Plan | None:
    """The plan of a message type (built once); None when it is not for the fast path."""
    try:
        return _plans[desc]
    except KeyError:
        return _build_plan(desc, set())


def _build_plan(desc: Descriptor, building: set[Descriptor]) -> Plan | None:
    # Only finished plans are published, so that another thread never walks half of one.
    if desc in _plans:
        return _plans[desc]
    if desc in building:
        return None  # a message type containing itself: left to json_format
    building.add(desc)
    plan: list[tuple[str, int, Any]] = []
    fast = True
    for f in desc.fields:
        sub = None
        if f.message_type is not None and _is_map(f):
            entry = f.message_type.fields_by_name
            # ProtoJSON writes non-string keys as strings and message values as dicts.
            ok = entry["key"].type == FieldDescriptor.TYPE_STRING
            ok = ok and entry["value"].type in _PLAIN_TYPES
            kind = _MAP
        elif f.message_type is not None:
            # Well-known types (Timestamp, Struct, ...) have JSON forms of their own.
            if not f.message_type.full_name.startswith("google.protobuf."):
                sub = _build_plan(f.message_type, building)
            ok = sub is not None
            kind = _REPEATED_MESSAGE if is_repeated(f) else _MESSAGE
        else:
            ok = f.type in _PLAIN_TYPES
            kind = _OPTIONAL if f.has_presence else _SCALAR
            if is_repeated(f):
                kind = _REPEATED_SCALAR
        if not ok:
            fast = False
            break
        plan.append((f.name, kind, sub))
    result = tuple(plan) if fast else None
    _plans[desc] = result
    return result


def _parse_fast(desc: Descriptor) -> bool:
    """Whether the constructor parses this message type exactly like ParseDict.

    Besides the plan's types: no oneof of two or more fields anywhere (the
    constructor would let a dict set two members of one; ParseDict refuses that).
    """
    ok = _parse_ok.get(desc)
    if ok is None:
        ok = _plan(desc) is not None and not _has_choice(desc, set())
        _parse_ok[desc] = ok
    return ok


def _has_choice(desc: Descriptor, seen: set[Descriptor]) -> bool:
    if desc in seen:
        return False
    seen.add(desc)
    if any(len(o.fields) > 1 for o in desc.oneofs):
        return True
    return any(
        f.message_type is not None and _has_choice(f.message_type, seen) for f in desc.fields
    )


# --- dict -> message ---------------------------------------------------------------


def dict_to_message(d: Mapping[str, object], msg_cls: type[M]) -> M:
    """A dict keyed by proto field names -> a new `msg_cls` message (ParseDict's result).

    Unknown keys and mistyped values raise (json_format.ParseError, or
    TypeError/ValueError/AttributeError for what ParseDict raises so).
    """
    if _parse_fast(cast(Descriptor, msg_cls.DESCRIPTOR)):
        try:
            return msg_cls(**d)
        except Exception:
            pass  # whatever upb refuses, ParseDict has the last word (see the docstring)
    return reference_dict_to_message(d, msg_cls)


def reference_dict_to_message(d: Mapping[str, object], msg_cls: type[M]) -> M:
    """`json_format.ParseDict` into a new message: the reference `dict_to_message` equals."""
    return json_format.ParseDict(cast(dict[str, Any], d), msg_cls())


# --- message -> dict ---------------------------------------------------------------


def message_to_dict(msg: Message) -> dict[str, Any]:
    """A message -> dict keyed by proto field names (see the module docstring), fast."""
    reader = _readers.get(msg.DESCRIPTOR)
    if reader is None:
        reader = _reader(cast(Descriptor, msg.DESCRIPTOR))
    return reader(msg)


# Per message type: a function reading one message into a dict along its plan, made
# once as Python source (one dict display, one attribute read per field): about twice
# as fast as walking the plan field by field, on every decision of every bot.
_readers: dict[Any, Callable[[Any], dict[str, Any]]] = {}


def _reader(desc: Descriptor) -> Callable[[Any], dict[str, Any]]:
    plan = _plan(desc)
    if plan is None:
        reader: Callable[[Any], dict[str, Any]] = reference_message_to_dict
    else:
        reader = _compile(plan)
    _readers[desc] = reader
    return reader


def _compile(plan: Plan) -> Callable[[Any], dict[str, Any]]:
    """The reader of ``plan``: the same dict as ``_walk`` gives, keys in the same order."""
    subs: dict[str, Any] = {}
    plain: list[str] = []  # key: value entries of the dict display
    later: list[str] = []  # statements for fields present only when set (after the display)
    for i, (name, kind, sub) in enumerate(plan):
        value = f"m.{name}"
        if kind in (_MESSAGE, _REPEATED_MESSAGE):
            subs[f"r{i}"] = _compile(sub)
        if kind == _SCALAR:
            entry = value
        elif kind == _REPEATED_SCALAR:
            entry = f"list({value})"
        elif kind == _MAP:
            entry = f"dict({value})"
        elif kind == _REPEATED_MESSAGE:
            entry = f"[r{i}(x) for x in {value}]"
        else:  # _OPTIONAL, _MESSAGE: present only when set; keeps the field order
            entry = ""
            got = value if kind == _OPTIONAL else f"r{i}({value})"
            later.append(f"    if m.HasField({name!r}): d[{name!r}] = {got}")
        if entry and not later:
            plain.append(f"{name!r}: {entry}")
        elif entry:
            later.append(f"    d[{name!r}] = {entry}")
    body = "\n".join(later)
    source = f"def read(m):\n    d = {{{', '.join(plain)}}}\n{body}\n    return d\n"
    namespace: dict[str, Any] = dict(subs)
    exec(compile(source, "<proto_codec reader>", "exec"), namespace)
    reader: Callable[[Any], dict[str, Any]] = namespace["read"]
    return reader


# --- message -> dict, filled in on first use ----------------------------------------

# The field kinds read at once by `lazy_message_to_dict` (a few attribute reads each).
_CHEAP = (_SCALAR, _REPEATED_SCALAR)


class FilledDict(dict[str, Any]):
    """A `LazyDict` once filled in: a plain dict in all but its type (nothing overridden).

    Copies and pickles of it (and of a `LazyDict`) are plain dicts.
    """

    __slots__ = ("_fill", "_message")
    _fill: Callable[[Any, dict[str, Any]], None] | None
    _message: Any

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (dict, (dict(self),))


def _filled(method: Any) -> Any:
    """``method`` of dict, called once the lazy dict is filled in."""

    def call(self: LazyDict, *args: Any, **kwargs: Any) -> Any:
        self._fill_in()
        return method(self, *args, **kwargs)

    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


class LazyDict(FilledDict):
    """What `message_to_dict` gives, with the costly fields read on first use.

    It holds the cheap leading fields of the message (scalars: for an observation,
    ``phase``, ``seat``, ``round``, ...) from the start; the rest (nested messages,
    lists of them, maps: passages, players, ...) is read from the message the first
    time anything else is asked of the dict (a key among them or not known yet,
    iteration, length, comparison, printing, a copy), all at once and in field
    order, and the dict then becomes a `FilledDict` (its methods dict's own, no
    indirection left). A bot that decides from the legal actions alone (the random
    house bot) then never pays for the conversion of the whole observation, about
    half of what a decision costs it.

    Code that reads dicts through CPython's C API without calling their methods
    (``PyDict_Next``: a few C extensions' serializers) sees only the cheap fields
    until the dict is filled in; ``dict(d)`` (or any access) fills it in.
    """

    __slots__ = ()

    def _fill_in(self) -> None:
        fill, message = self._fill, self._message
        if fill is not None:
            # Filled before the type changes: a second thread meanwhile writes the same
            # keys and values again, in the same order.
            fill(message, self)
            self._fill = self._message = None
            self.__class__ = FilledDict  # type: ignore[assignment]

    def __getitem__(self, key: Any) -> Any:
        try:
            return dict.__getitem__(self, key)
        except KeyError:
            self._fill_in()
            return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        self._fill_in()
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        if dict.__contains__(self, key):
            return True
        self._fill_in()
        return dict.__contains__(self, key)

    __iter__ = _filled(dict.__iter__)
    __reversed__ = _filled(dict.__reversed__)
    __len__ = _filled(dict.__len__)
    __eq__ = _filled(dict.__eq__)
    __ne__ = _filled(dict.__ne__)
    __repr__ = _filled(dict.__repr__)
    __or__ = _filled(dict.__or__)
    __ror__ = _filled(dict.__ror__)
    __ior__ = _filled(dict.__ior__)
    __setitem__ = _filled(dict.__setitem__)
    __delitem__ = _filled(dict.__delitem__)
    __sizeof__ = _filled(dict.__sizeof__)
    keys = _filled(dict.keys)
    values = _filled(dict.values)
    items = _filled(dict.items)
    copy = _filled(dict.copy)
    pop = _filled(dict.pop)
    popitem = _filled(dict.popitem)
    setdefault = _filled(dict.setdefault)
    update = _filled(dict.update)
    clear = _filled(dict.clear)
    __reduce_ex__ = _filled(FilledDict.__reduce_ex__)
    __hash__ = None  # type: ignore[assignment]  # as dict's


def lazy_message_to_dict(msg: Message) -> dict[str, Any]:
    """`message_to_dict(msg)`, its costly fields read on first use (`LazyDict`).

    Equal to `message_to_dict(msg)` in every way a dict is used (keys in the same
    order); a message type without costly fields, or outside the fast path, gets
    `message_to_dict`'s plain dict. Read it before the message changes (the SDK's
    requests never do).
    """
    desc = msg.DESCRIPTOR
    split = _lazy_readers.get(desc)
    if split is None:
        split = _lazy_reader(cast(Descriptor, desc))
    head, fill = split
    if fill is None:
        return head(msg)
    d = LazyDict(head(msg))
    d._message, d._fill = msg, fill
    return d


_lazy_readers: dict[Any, tuple[Callable[[Any], dict[str, Any]], Any]] = {}


def _lazy_reader(desc: Descriptor) -> tuple[Callable[[Any], dict[str, Any]], Any]:
    plan = _plan(desc)
    split: tuple[Callable[[Any], dict[str, Any]], Any]
    if plan is None:
        split = (message_to_dict, None)
    else:
        n = 0
        while n < len(plan) and plan[n][1] in _CHEAP:
            n += 1
        if n == len(plan):
            split = (message_to_dict, None)
        else:
            head = _compile(plan[:n])
            rest = _compile(plan[n:])  # its dict's entries, added in order to the head's

            def fill(m: Any, d: dict[str, Any], rest: Any = rest) -> None:
                dict.update(d, rest(m))

            split = (head, fill)
    _lazy_readers[desc] = split
    return split


def _walk(msg: Any, plan: Plan) -> dict[str, Any]:
    """The plan read field by field: what the compiled readers must equal (tests)."""
    d: dict[str, Any] = {}
    for name, kind, sub in plan:
        if kind == _SCALAR:
            d[name] = getattr(msg, name)
        elif kind == _OPTIONAL:
            if msg.HasField(name):
                d[name] = getattr(msg, name)
        elif kind == _REPEATED_MESSAGE:
            d[name] = [_walk(m, sub) for m in getattr(msg, name)]
        elif kind == _REPEATED_SCALAR:
            d[name] = list(getattr(msg, name))
        elif kind == _MAP:
            d[name] = dict(getattr(msg, name))
        elif msg.HasField(name):  # _MESSAGE
            d[name] = _walk(getattr(msg, name), sub)
    return d


def reference_message_to_dict(msg: Message) -> dict[str, Any]:
    """What digdown.wire always returned: MessageToDict with field names and defaults,
    64-bit ints turned back into ints. The reference `message_to_dict` equals."""
    d = json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    _fix_int64(cast(Descriptor, msg.DESCRIPTOR), d)
    return d


def _fix_int64(desc: Descriptor, d: dict[str, Any]) -> None:
    """ProtoJSON writes 64-bit ints as strings; turn them back into ints (in place)."""
    for field in desc.fields:
        if field.name not in d:
            continue
        value = d[field.name]
        if field.message_type is not None and _is_map(field):
            if field.message_type.fields_by_name["value"].type in _INT64_TYPES:
                d[field.name] = {k: int(v) for k, v in value.items()}
        elif field.message_type is not None:
            items = value if is_repeated(field) else [value]
            for item in items:
                if isinstance(item, dict):
                    _fix_int64(field.message_type, item)
        elif field.type in _INT64_TYPES:
            d[field.name] = [int(v) for v in value] if is_repeated(field) else int(value)
