"""The rule for records kept in a log: what Inspect leaves out must read back the same.

Inspect writes a sample (its store, its metadata's models) leaving out the None fields of
every pydantic model (``exclude_none``). A record read back from a log then lacks each
field that was None: such a field must either default to None (absent reads as None) or
be written as null all the same (``NullsKept``). ``tests/test_records.py`` checks every
record a log holds against this rule.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SerializationInfo, SerializerFunctionWrapHandler, model_serializer


class NullsKept(BaseModel):
    """A logged record whose None fields are written as null, even where None is left out.

    Inspect writes a sample's store leaving out None fields (``exclude_none``). A fault
    plan and the fault log went into the store as their JSON dumps, None fields as
    null (and NaN too, pydantic's default), before the store held them typed; records
    of this class keep their nulls, so the log holds the same JSON.
    """

    @model_serializer(mode="wrap")
    def _nulls_kept(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if not info.exclude_none or not isinstance(data, dict):
            return data
        excluded = info.exclude or ()
        included = info.include

        def kept(name: str) -> bool:
            if name in data:
                return True
            wanted = name not in excluded and (included is None or name in included)
            return wanted and getattr(self, name) is None

        fields = type(self).model_fields
        extras = {name: value for name, value in data.items() if name not in fields}
        return {**{name: data.get(name) for name in fields if kept(name)}, **extras}
