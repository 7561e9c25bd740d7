"""Records of the fault log and plan, written to the log as they always were."""

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

        return {name: data.get(name) for name in type(self).model_fields if kept(name)}
