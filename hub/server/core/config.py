"""Settings of one hub: where its data and database are, its size caps, review and re-verification options."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hub.env import UsageError
from hub.env.settings import settings
from hub.server.core.db import default_db_url

__all__ = ["PYPI_SIMPLE", "HubConfig", "Limits"]

PYPI_SIMPLE = "https://pypi.org/simple/"


@dataclass(frozen=True)
class Limits:
    """Caps on what one push may bring (also stated in docs/hub-server.md).

    ``max_ratio`` applies once an archive unpacks to more than ``ratio_floor`` bytes, so that
    small, very compressible bundles are not refused.
    """

    max_upload_bytes: int = 64 * 1024**2
    max_unpacked_bytes: int = 256 * 1024**2
    max_members: int = 2000
    max_ratio: float = 100.0
    ratio_floor: int = 1024**2


@dataclass(frozen=True)
class HubConfig:
    """One hub: ``data`` holds the blobs (and the SQLite database unless ``db_url`` is set)."""

    data: Path
    db_url: str = ""
    limits: Limits = field(default_factory=Limits)
    lease_s: float = 60.0
    review_fast: bool = False  # smaller check sizes (tests and benchmarks)
    #: factor for a review's time limits; None: measured when a worker starts (reviews.hostspeed)
    review_time_scale: float | None = None
    auth_failures_per_minute: int = 10
    reverify_share: float = 0.1  # share of a pushed run's rollouts regraded (at least 20, or all)
    #: the index ``/simple/NAME/`` redirects to for names the hub does not host ("" or "none": none;
    #: ``verihub hub serve`` defaults to :data:`PYPI_SIMPLE`)
    upstream_index: str = ""
    #: anyone may sign up on the web pages (default: only with an admin's invitation)
    open_registration: bool = False

    def __post_init__(self) -> None:
        if not 0.0 <= self.reverify_share <= 1.0:
            raise ValueError(f"reverify_share must be between 0 and 1, not {self.reverify_share}")

    @property
    def upstream(self) -> str:
        """The upstream index URL ending in ``/``, or "" when there is none."""
        url = self.upstream_index.strip()
        return "" if url.lower() in ("", "none") else url.rstrip("/") + "/"

    @property
    def own_wheel_dir(self) -> Path:
        """Where `verihub hub serve` puts the wheel of the verihub it runs (`/simple/verihub/`)."""
        return self.data / "own-wheel"

    @property
    def database(self) -> str:
        return self.db_url or default_db_url(self.data)

    @classmethod
    def from_env(cls) -> HubConfig:
        """The config a uvicorn worker process reads (set by ``verihub hub serve``)."""
        env = settings()
        if env.hub_data is None:
            raise UsageError("VERIHUB_HUB_DATA is not set: start hub servers with `verihub hub serve`")
        data = env.hub_data
        return cls(
            data=data,
            db_url=env.hub_db,
            lease_s=env.hub_lease_s,
            review_fast=env.hub_review_fast,
            review_time_scale=env.hub_review_time_scale,
            reverify_share=env.hub_reverify_share,
            upstream_index=env.hub_upstream_index,
            open_registration=env.hub_open_registration,
        )

    def _time_scale_env(self) -> dict[str, str]:
        if self.review_time_scale is None:
            return {}
        return {"VERIHUB_HUB_REVIEW_TIME_SCALE": str(self.review_time_scale)}

    def to_env(self) -> dict[str, str]:
        return {
            "VERIHUB_HUB_DATA": str(self.data.resolve()),
            "VERIHUB_HUB_DB": self.db_url,
            "VERIHUB_HUB_LEASE_S": str(self.lease_s),
            "VERIHUB_HUB_REVIEW_FAST": "1" if self.review_fast else "0",
            **(
                {"VERIHUB_HUB_REVIEW_TIME_SCALE": str(self.review_time_scale)}
                if self.review_time_scale
                else {}
            ),
            "VERIHUB_HUB_REVERIFY_SHARE": str(self.reverify_share),
            "VERIHUB_HUB_UPSTREAM_INDEX": self.upstream or "none",
            "VERIHUB_HUB_OPEN_REGISTRATION": "1" if self.open_registration else "0",
        }
