"""A run resolved once: its configuration, every protocol point, the release's own words.

The task builds one ``ResolvedRun`` from the validated ``RunConfig`` and hands it to
whatever carries the run out: the agent, the environment (simulator, faults), the scorer,
the serving code, the estimate. None of them resolves a protocol point or reads the
release's prompts again.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from occubench.config._protocol import ProtocolPoints, resolve_points
from occubench.config._release_prompts import ReleasePrompts
from occubench.config._run import CONFIG_METADATA, POINTS_METADATA, RELEASE_METADATA, RunConfig
from occubench.faults import FaultSettings


def protocol_points(config: RunConfig) -> ProtocolPoints:
    """Every protocol point's value for ``config`` (``resolve_points``).

    A run holds them in its ``ResolvedRun``; this is for reading a log that did not
    record them.
    """
    return resolve_points(
        config.protocol,
        config.overrides(),
        simulator_places_faults=config.simulator_places_faults(),
    )


class ResolvedRun(BaseModel):
    """A run as its parts carry it out, resolved once (``ResolvedRun.of``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: RunConfig = Field(description="The validated configuration, as given.")
    points: ProtocolPoints = Field(
        description="Every protocol point: the protocol's preset, the run's overrides and "
        "the rule for online checks under simulator-made faults (``resolve_points``)."
    )
    fault_settings: FaultSettings = Field(
        description="The fault settings with the fault engine the protocol resolved."
    )
    release: ReleasePrompts | None = Field(
        default=None,
        exclude=True,  # the release's own text stays out of dumps; the log keeps its hashes
        description="The release's own prompt wording (``prompts_from``), if the run uses it.",
    )

    @classmethod
    def of(cls, config: RunConfig) -> ResolvedRun:
        """Resolve a configuration: its protocol points, then the release's prompts if named.

        Raises:
            PromptsError: ``prompts_from`` names a clone whose prompts cannot be read.
        """
        points = protocol_points(config)
        engine = {"fault_engine": points.fault_engine}
        fault_settings = FaultSettings.model_validate(
            {**config.model_dump(include=set(FaultSettings.model_fields)), **engine}
        )
        release = ReleasePrompts.read(config.prompts_from) if config.prompts_from else None
        return cls(config=config, points=points, fault_settings=fault_settings, release=release)

    def metadata(self) -> dict[str, object]:
        """The run as its log's task metadata records it: configuration, points, release files."""
        return {
            CONFIG_METADATA: self.config.model_dump(mode="json"),
            POINTS_METADATA: self.points.model_dump(mode="json"),
            **({RELEASE_METADATA: self.release.files} if self.release is not None else {}),
        }
